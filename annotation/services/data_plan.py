"""A data-management-plan section for an ethics application, generated from a study's facts (`manage.py data_plan`):
what is collected (the same facts as the consent statement, annotation.services.consent), the legal basis (a
placeholder the researcher fills), where it is stored, for how long, who may see personal data, how releases are
pseudonymised, how erasure is done, and the consent versions participants agreed to."""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Q

from annotation.models import Study
from annotation.selectors import study_consent_versions
from annotation.services.consent import consent_facts, consent_statement_parts
from core.personal_data import PERSONAL_DATA_PERMISSION


def _accounts_with_permission() -> int:
    app_label, codename = PERSONAL_DATA_PERMISSION.split(".")
    granted = Q(user_permissions__codename=codename, user_permissions__content_type__app_label=app_label) | Q(
        groups__permissions__codename=codename, groups__permissions__content_type__app_label=app_label)
    return get_user_model().objects.filter(is_active=True).filter(granted | Q(is_superuser=True)).distinct().count()


def data_plan_facts(*, study: Study) -> dict[str, Any]:
    db = connection.settings_dict
    return {
        "study": study.slug, "title": study.title, "platform": study.platform,
        "collected": [text for _, text in consent_statement_parts(study=study)],
        "consent": consent_facts(study=study),
        "storage": {"engine": connection.vendor, "database": db.get("NAME") or "",
                    "host": db.get("HOST") or "local socket", "media": str(settings.MEDIA_ROOT)},
        "accounts_with_personal_data_permission": _accounts_with_permission(),
        "consent_versions": [{"sha256": v["sha256"], "participants": v["participants"], "sessions": v["sessions"]}
                             for v in study_consent_versions(study=study)],
    }


def data_plan_markdown(*, study: Study) -> tuple[str, dict[str, Any]]:
    """The Markdown section and the facts it was written from."""
    facts = data_plan_facts(study=study)
    consent, storage = facts["consent"], facts["storage"]
    special = [q.get("text") or q.get("name") for q in consent["special"]]
    lines = [
        f"## Data management plan: study `{study.slug}`" + (f" ({study.title})" if study.title else ""), "",
        "### What is collected", "",
        "Participants read the following statement, generated from the study's settings, after the researcher's "
        "consent text:", "",
        *(f"- {text}" for text in facts["collected"]), "",
        "### Legal basis", "",
        "_To be completed by the researcher: the legal basis for processing (e.g. consent, or a task in the public "
        "interest for research) and the ethics approval reference._",
    ]
    if consent["persona_from_platform"]:
        names = ", ".join(str(q.get("name")) for q in consent["persona_from_platform"])
        lines += ["", f"Data minimisation: {names} are read from {consent['persona_platform']}'s submission "
                  "demographics (a snapshot taken when the participant completes the study) instead of being asked; "
                  "only these attributes are kept, mapped to the study's answer choices, and the rest of the "
                  "platform's answer is discarded when it is read."]
    if special:
        lines += ["", "Special categories of personal data are asked (" + "; ".join(special) + "): participants "
                  "give separate explicit consent, recorded with its time on their session, to this statement:", "",
                  *(f"> {line}" for line in study.special_category_consent.splitlines() or [""])]
    lines += [
        "", "### Storage", "",
        f"- Answers, sessions, platform ids and persona answers are stored in a {storage['engine']} database "
        f"(`{storage['database']}` on {storage['host']}); exported files are written under `{storage['media']}`.",
        "- Raw platform ids leave the database only in calls to the recruiting platform and its decisions file.",
        "", "### Retention", "",
        f"- {consent['retention_days']} days after the study is closed and its platform payments are settled, raw "
        "platform ids are replaced by keyed pseudonyms and persona answers and telemetry detail are deleted "
        "(`manage.py retention_apply`, and a scheduled job). Payment records keep amounts and the platform's "
        "references with the worker id pseudonymised.",
        "", "### Who may see personal data", "",
        f"- Accounts holding the `{PERSONAL_DATA_PERMISSION}` permission (now "
        f"{facts['accounts_with_personal_data_permission']}, superusers included) see raw ids, persona answers and "
        "telemetry detail; every other account sees pseudonyms. Each look at personal data is written to the access "
        "log, which administrators can read.",
        "", "### Pseudonymisation in releases", "",
        "- Every export, corpus, card and benchmark carries HMAC-SHA256 pseudonyms keyed with a secret held outside "
        "the database, optionally salted per release so that two releases cannot be joined; persona combinations "
        f"held by fewer than {settings.STYLECROWD_K_ANONYMITY} people are generalised or withheld.",
        "- Per-annotator labels " + ("are published with pseudonyms." if consent["release_annotator_labels"]
                                     else "are not published; only labels combined over annotators are."),
        "", "### Withdrawal and erasure", "",
        f"- Participants write to {consent['contact']} quoting the consent receipt code shown on their consent page "
        "(or their platform id). The researcher looks the code up in the admin (batches, search by receipt), then "
        "runs `manage.py erase_participant --platform PLATFORM --id ID` (a dry run listing what would go), and again "
        "with `--apply`. A tombstone keeps only the keyed hash, the date and the counts.",
        "", "### Consent versions", "",
    ]
    if facts["consent_versions"]:
        lines += [f"- sha256 `{v['sha256'][:12]}`: {v['participants']} participant(s), {v['sessions']} session(s)"
                  for v in facts["consent_versions"]]
    else:
        lines.append("- Nobody has agreed yet: the first session to agree stores the current text as version 1.")
    return "\n".join(lines) + "\n", facts
