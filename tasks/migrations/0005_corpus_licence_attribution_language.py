import re

from django.db import migrations, models

# Free-text licence notes from before licences were identifiers: the note becomes the attribution, and a licence
# it names plainly becomes the identifier. Anything else stays "not recorded" for the researcher to set.
_NOTES = [(re.compile(r"gyafc|yahoo", re.I), "LicenseRef-GYAFC"), (re.compile(r"\bMIT\b"), "MIT"),
          (re.compile(r"GPL-?3\.0-or-later", re.I), "GPL-3.0-or-later"), (re.compile(r"\bGPL", re.I), "GPL-3.0-only"),
          (re.compile(r"CC-?BY-?4\.0", re.I), "CC-BY-4.0"), (re.compile(r"Apache", re.I), "Apache-2.0")]


def notes_to_identifiers(apps, schema_editor):
    Corpus = apps.get_model("tasks", "Corpus")
    for corpus in Corpus.objects.exclude(licence=""):
        note = corpus.licence
        # Notes that describe another source's licence ("as the input sentences") name no licence of their own.
        identifier = "" if note.lower().startswith("as the") else next(
            (ident for pattern, ident in _NOTES if pattern.search(note)), "")
        corpus.attribution = corpus.attribution or note
        corpus.licence = identifier
        corpus.save(update_fields=["licence", "attribution"])


def identifiers_to_notes(apps, schema_editor):
    Corpus = apps.get_model("tasks", "Corpus")
    for corpus in Corpus.objects.exclude(attribution=""):
        corpus.licence = corpus.attribution
        corpus.save(update_fields=["licence"])


class Migration(migrations.Migration):

    dependencies = [
        ("tasks", "0004_screening_setups"),
    ]

    operations = [
        migrations.AddField(
            model_name="corpus",
            name="attribution",
            field=models.TextField(blank=True, default="", help_text="Who to credit and cite for the source data."),
        ),
        migrations.AddField(
            model_name="corpus",
            name="language",
            field=models.CharField(default="en", help_text="BCP-47 language tag of the texts (en, de, …).",
                                   max_length=35),
        ),
        migrations.RunPython(notes_to_identifiers, identifiers_to_notes),
        migrations.AlterField(
            model_name="corpus",
            name="licence",
            field=models.CharField(
                blank=True, default="", max_length=64,
                help_text="SPDX identifier of the source data's licence (tasks.licences); empty: not recorded. A "
                          "licence that forbids redistribution keeps the texts out of every export (the ids-only "
                          "form is offered instead)."),
        ),
    ]
