from django.db import migrations

STEL_COMPONENTS = [
    ("formality", "informal", "formal", "dimension", "Formal vs informal language (GYAFC, Rao & Tetreault 2018)."),
    ("simplicity", "complex", "simple", "dimension", "Complex vs simple language (TurkCorpus, Xu et al. 2016)."),
    ("contraction", "expanded", "contracted", "characteristic", "Contractions written out vs contracted."),
    ("nbr_substitution", "plain", "substituted", "characteristic", "Letters vs number substitutions (leet)."),
]


def create_components(apps, schema_editor):
    StyleComponent = apps.get_model("tasks", "StyleComponent")
    for name, label_1, label_2, kind, description in STEL_COMPONENTS:
        StyleComponent.objects.update_or_create(
            name=name, defaults={"label_1": label_1, "label_2": label_2, "kind": kind, "description": description}
        )


def remove_components(apps, schema_editor):
    apps.get_model("tasks", "StyleComponent").objects.filter(name__in=[c[0] for c in STEL_COMPONENTS]).delete()


class Migration(migrations.Migration):
    dependencies = [("tasks", "0001_initial")]
    operations = [migrations.RunPython(create_components, remove_components)]
