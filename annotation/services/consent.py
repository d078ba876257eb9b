"""Consent that cannot contradict the study: the "What we record, and for how long" statement generated from the
study's settings alone, the explicit-consent rule for special-category questions, and the versions of the full text
participants agree to (stored once under their sha256; a session points at the one it saw).

What a participant reads is the researcher's own text followed by the statement (`consent_text_full`). The
statement names the answers, the platform id (kept until retention ends, then a pseudonym), times on the server's
clock, writing telemetry where the study records it (free-text answers), every eligibility and persona question by
its text, the retention period, whether pseudonymous
per-annotator labels are published, and whom to write to for withdrawal and erasure with the receipt code shown on
the page (`Batch.consent_receipt`). The data plan (`manage.py data_plan`) reads the same facts.
"""
from __future__ import annotations

import hashlib
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

from annotation.error_codes import SPECIAL_CATEGORY_CONSENT_MISSING
from annotation.models import ConsentVersion, EntryPlatform, ItemKind, Study
from annotation.services.persona_platform import PLATFORM_NAMES, questions_asked, questions_from_platform
from annotation.services.telemetry import CONSENT_NOTICE, FREE_TEXT_KINDS
from core.errors import ApplicationError

STATEMENT_HEADING = gettext_noop("What we record, and for how long")  # translated where shown
SPECIAL_HEADING = gettext_noop("Explicit consent to special categories of personal data")
SPECIAL_FIELD = "special_category_consent"

ANSWERS = {
    ItemKind.QUADRUPLE: gettext_lazy("the choices you make on each item"),
    ItemKind.TRIPLE: gettext_lazy("the choices you make on each item"),
    ItemKind.STYLE_OR_CONTENT: gettext_lazy("the choices you make on each item"),
    ItemKind.LIKERT: gettext_lazy("the ratings you give"),
    ItemKind.RANKING: gettext_lazy("the orderings you give"),
    ItemKind.REWRITE: gettext_lazy("the rewrites you write (and reviewers' decisions on them)"),
}
PLATFORM_IDS = {
    EntryPlatform.PROLIFIC: gettext_lazy("your Prolific participant id"),
    EntryPlatform.MTURK: gettext_lazy("your Amazon Mechanical Turk worker id"),
    EntryPlatform.ANY: gettext_lazy("the participant id of the platform you came from (Prolific or Amazon Mechanical "
                                    "Turk), or a random id made here if you came through an open link"),
}


def retention_days(*, study: Study) -> int:
    return study.retention_days if study.retention_days is not None else settings.STYLECROWD_RETENTION_DAYS


def special_category_questions(*, questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The questions that ask for special-category data (PASTEL's ethnicity and political orientation, or any
    question the researcher marked `"special_category": true`)."""
    return [q for q in questions or [] if isinstance(q, dict) and q.get("special_category")]


def special_category_check(*, questions: list[dict[str, Any]], statement: str, where: str = "") -> None:
    """Refuse a study asking special-category questions without the explicit-consent statement: the same error at
    every door (create_study, the admin form, the API body, study_open), with nothing stored."""
    asked = special_category_questions(questions=questions)
    if asked and not (statement or "").strip():
        names = ", ".join(str(q.get("name")) for q in asked)
        raise ApplicationError(
            f"{where}Special-category consent: the study asks special-category questions ({names}); give the "
            "explicit-consent statement that participants tick separately.",
            code=SPECIAL_CATEGORY_CONSENT_MISSING, status=400, field=SPECIAL_FIELD,
            details={SPECIAL_FIELD: [f"required: the study asks {names}"]},
        )


def consent_facts(*, study: Study) -> dict[str, Any]:
    """What the study collects, as data: the one source of the statement and of the data plan."""
    questions = list(study.eligibility_questions or [])
    asked = questions_asked(questions)
    return {
        "answers": str(ANSWERS.get(study.item_kind, _("your answers"))),
        "platform_id": str(PLATFORM_IDS.get(study.platform, PLATFORM_IDS[EntryPlatform.ANY])),
        "telemetry": study.item_kind in FREE_TEXT_KINDS,
        "eligibility": [q for q in asked if not q.get("persona")],
        "persona": [q for q in asked if q.get("persona")],
        # Data minimisation: persona attributes the platform already holds, read from it instead of asked.
        "persona_from_platform": questions_from_platform(questions),
        "persona_platform": PLATFORM_NAMES.get(study.platform, study.platform),
        "special": special_category_questions(questions=questions),
        "retention_days": retention_days(study=study),
        "release_annotator_labels": study.release_annotator_labels,
        "contact": settings.STYLECROWD_PRIVACY_CONTACT,
    }


def _question_list(questions: list[dict[str, Any]]) -> str:
    return "; ".join(f"“{q.get('text') or q.get('name')}”" for q in questions)


def consent_statement_parts(*, study: Study) -> list[tuple[str, str]]:
    """(key, sentence) pairs of the statement, in order; the page lists them (the telemetry one keeps its id)."""
    facts = consent_facts(study=study)
    days = facts["retention_days"]
    parts = [
        ("answers", _("Your answers: %(answers)s.") % {"answers": facts["answers"]}),
        ("platform-id", _("Your id: %(id)s. It is kept with your answers until the retention period ends; then it is "
                          "replaced by a pseudonym (a keyed code that cannot be turned back into the id).")
         % {"id": facts["platform_id"]}),
        ("times", _("Times by the server's clock: when your session started, when each item was served and when "
                    "each answer arrived.")),
    ]
    if facts["telemetry"]:
        parts.append(("telemetry", _(CONSENT_NOTICE)))
    if facts["eligibility"]:
        parts.append(("eligibility", _("Your answers to these questions before the task: %(questions)s.")
                      % {"questions": _question_list(facts["eligibility"])}))
    if facts["persona"]:
        parts.append(("persona", _("Your answers to these questions about yourself (kept with your id until the "
                                   "retention period ends, then only as counts over groups of people): "
                                   "%(questions)s. You may answer “prefer not to say” where offered.")
                      % {"questions": _question_list(facts["persona"])}))
    if facts["persona_from_platform"]:
        platform = facts["persona_platform"]
        names = ", ".join(str(q.get("name")).replace("_", " ") for q in facts["persona_from_platform"])
        parts.append(("persona-platform", _(
            "Read from %(platform)s instead of asked: your %(names)s, as your %(platform)s profile gave them when you "
            "completed the study (nothing else of that profile is kept). They are kept like your answers about "
            "yourself: with your id until the retention period ends, then only as counts over groups of people.")
            % {"platform": platform, "names": names}))
    if facts["special"]:
        parts.append(("special", _("Some of these questions ask for special categories of personal data "
                                   "(%(questions)s): they need your explicit consent, asked separately below.")
                      % {"questions": _question_list(facts["special"])}))
    parts.append(("retention", _("For how long: %(days)s days after the study is closed and its payments are "
                                 "settled, your platform id is replaced by a pseudonym and your answers about "
                                 "yourself and the detail of any writing telemetry are deleted.") % {"days": days}))
    if facts["release_annotator_labels"]:
        parts.append(("release", _("Publication: the data set we publish lists each answer with a pseudonym of the "
                                   "person who gave it (never your platform id), so others can study individual "
                                   "annotators' labels.")))
    else:
        parts.append(("release", _("Publication: the data set we publish holds labels combined over annotators "
                                   "only; your individual answers are not published.")))
    parts.append(("withdraw", _("Taking part is voluntary and you may stop at any time. To withdraw, or to ask "
                                "for your data to be erased, write to %(contact)s and quote the consent receipt code "
                                "shown on this page.") % {"contact": facts["contact"]}))
    return parts


def consent_statement(*, study: Study) -> str:
    """The "What we record, and for how long" statement, generated from the study's settings only."""
    return "\n".join([_(STATEMENT_HEADING), *(f"- {text}" for _, text in consent_statement_parts(study=study))])


def consent_text_full(*, study: Study) -> str:
    """What a participant agrees to: the researcher's text, the statement and (when asked) the explicit-consent
    statement for special-category questions."""
    blocks = [study.consent_text.strip(), consent_statement(study=study)]
    if special_category_questions(questions=study.eligibility_questions):
        blocks.append(f"{_(SPECIAL_HEADING)}\n{study.special_category_consent.strip()}")
    return "\n\n".join(block for block in blocks if block)


def consent_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def consent_version_resolve(*, study: Study) -> ConsentVersion:
    """The stored version of the study's current full text (created the first time it is agreed to): an edit of
    the text after participants makes a new version, and earlier sessions keep the one they saw."""
    text = consent_text_full(study=study)
    digest = consent_sha256(text)
    found = ConsentVersion.objects.filter(sha256=digest).first()
    if found is not None:
        return found
    try:
        with transaction.atomic():  # two first participants at once: one insert wins, the other reads it
            return ConsentVersion.objects.create(sha256=digest, text=text)
    except IntegrityError:
        return ConsentVersion.objects.get(sha256=digest)
