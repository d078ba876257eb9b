"""The annotator's browser pages: one server-rendered shell per study that drives the JSON annotator API.

The page only parses the platform's URL parameters and renders the study's participant-facing texts; every
state change (session, consent, eligibility, items, answers) goes through `/api/v1/…` so the browser and the
JSON clients share one door. Nothing rendered here may reveal a correct answer or which items screen.
"""
from __future__ import annotations

import re
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import translation
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_GET
from django.views.i18n import JavaScriptCatalog

from annotation.models import Study
from annotation.services.consent import (
    SPECIAL_HEADING,
    STATEMENT_HEADING,
    consent_statement_parts,
    special_category_questions,
)
from annotation.services.display import public_questions
from annotation.services.participation import PLACEHOLDER, accepted_platforms, entry_check, grace_seconds
from annotation.services.persona_platform import questions_asked
from core.errors import ApplicationError
from core.languages import language_direction, language_normalise

# Query parameters each recruiting platform appends to the study link (Prolific's and MTurk's documented names).
PLATFORM_PARAMS: dict[str, tuple[str, str, str]] = {
    "prolific": ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"),
    "mturk": ("workerId", "hitId", "assignmentId"),
}
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"  # MTurk's assignmentId while a worker previews a HIT
MAX_PARAM_LENGTH = 128  # Participant.external_id's max_length: longer values are refused, not truncated.


def participant_from_query(query: dict[str, str]) -> dict[str, str]:
    """Who is arriving, from the link's parameters: Prolific first, then MTurk, else an anonymous link."""
    for platform, (pid_key, study_key, session_key) in PLATFORM_PARAMS.items():
        pid = (query.get(pid_key) or "").strip()
        if pid:
            return {
                "platform": platform,
                "participant": pid,
                "study_ref": (query.get(study_key) or "").strip(),
                "session_ref": (query.get(session_key) or "").strip(),
            }
    return {"platform": "anonymous", "participant": "", "study_ref": "", "session_ref": ""}


_LABEL_LINE = re.compile(r"^[A-Z][\w ()-]{0,20}:")  # "Answer: …", "Keys: …", "A1: …"


def prose_html(text: str) -> SafeString:
    """Researcher-written text as paragraphs: blank lines separate paragraphs; a line break inside one is kept
    only where it is meant (an indented or "Label:" line, or after a finished sentence), so text hard-wrapped
    at a fixed width still flows on a phone while an example's lines stay on their own lines."""
    paragraphs = []
    for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n").strip()):
        html = ""
        for line in block.split("\n"):
            keep_break = html and (line[:1].isspace() or _LABEL_LINE.match(line) or html.rstrip()[-1:] in ".:!?)")
            html += ("<br>" if keep_break else " " if html else "") + escape(line.strip())
        if html:
            paragraphs.append(f"<p>{html}</p>")
    return mark_safe("\n".join(paragraphs))  # noqa: S308 - every piece of text above went through escape()


# Where an MTurk ExternalQuestion must post the finished assignment; anything else is ignored, so the link
# cannot be abused to make the page post to an arbitrary site.
MTURK_SUBMIT_HOSTS = ("https://www.mturk.com", "https://workersandbox.mturk.com")


def mturk_submit_url(query: dict[str, str]) -> str:
    """MTurk's `turkSubmitTo` + `/mturk/externalSubmit`, for its two official hosts only ("" otherwise)."""
    base = (query.get("turkSubmitTo") or "").strip().rstrip("/")
    return f"{base}/mturk/externalSubmit" if base in MTURK_SUBMIT_HOSTS else ""


def _public_eligibility(questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Eligibility questions without their accepted answers (those stay on the server), each choice with the label
    the page shows (a persona question's `choice_labels` in the study's language; else the choice as it is)."""
    public = []
    for index, question in enumerate(questions or []):
        name = str(question.get("name") or f"q{index + 1}")
        choices, labels = list(question.get("choices", [])), dict(question.get("choice_labels") or {})
        # Each choice is posted as its value (the stored answer) and shown as its label in the study's language.
        public.append({"name": name, "text": question.get("text", name), "choices": choices, "choice_labels": labels,
                       "options": [{"value": c, "label": labels.get(str(c), c)} for c in choices]})
    return public


def _duration(seconds: int) -> str:
    """300 → "5 minutes", 90 → "90 seconds", 60 → "1 minute": how long, as a participant reads it."""
    if seconds % 60:
        return ngettext("%(count)d second", "%(count)d seconds", seconds) % {"count": seconds}
    minutes = seconds // 60
    return ngettext("%(count)d minute", "%(count)d minutes", minutes) % {"count": minutes}


def timing(study: Study) -> dict[str, Any]:
    """The batch's two clocks, said before they start: the first answer's grace (a started batch whose first answer
    has not arrived in time gives its items back) and the batch's time limit (participation.first_answer_deadline)."""
    limit = study.batch_time_limit_minutes * 60
    grace = min(grace_seconds(study), limit)
    text = _("You have %(limit)s for the whole batch.") % {"limit": _duration(limit)}
    if grace < limit:
        text = _("Once the first item is shown, please answer it within %(grace)s, however long you take to read it: "
                 "otherwise your place goes to someone else. After your first answer you have %(limit)s for the "
                 "whole batch.") % {"grace": _duration(grace), "limit": _duration(limit)}
    return {"grace_seconds": grace if grace < limit else 0, "grace_text": _duration(grace),
            "time_limit_minutes": study.batch_time_limit_minutes, "time_limit_text": _duration(limit), "text": text}


# What each refused link means for the participant, by the parameter `entry_check` names.
PLATFORM_NAMES = {"prolific": "Prolific", "mturk": "Amazon Mechanical Turk", "anonymous": gettext_lazy("an open link")}
PREVIEW_WHO = {"prolific": "from Prolific", "mturk": "from Amazon Mechanical Turk",
               "anonymous": "with the open link (no platform)"}


REFUSED_TODO = {
    "prolific": gettext_lazy(
        "Please go back to Prolific and open the study from its page there. If the same page appears again, return "
        "your submission on Prolific (\u201cReturn submission\u201d) and message the researcher there. There is no "
        "code to enter."),
    "mturk": gettext_lazy(
        "Please go back to Amazon Mechanical Turk and open the HIT from there. If the same page appears again, "
        "return the HIT (\u201cReturn\u201d) and contact the requester. There is no code to submit."),
    "": gettext_lazy("Please open the study from the link the researcher gave you. If the same page appears again, "
                     "contact the researcher."),
}


def _home(study: Study, who: dict[str, str]) -> str:
    """The platform a refused participant goes back to: the one they came from, if the study takes it, else the
    study's only platform ("" when that is unknown)."""
    accepted = accepted_platforms(study)
    if who["platform"] in accepted:
        return who["platform"]
    return accepted[0] if len(accepted) == 1 else ""


def refusal(*, study: Study, who: dict[str, str], error: ApplicationError) -> dict[str, str]:
    """The refused-link page's words: what is wrong with this link, and what to do now on the platform."""
    field = next(iter(error.details or {}), "platform")
    message = " ".join(error.details.get(field, [])) if error.details else error.message
    home = _home(study, who)
    where = str(PLATFORM_NAMES.get(home, _("the platform you came from")))
    if any(PLACEHOLDER.search(value) for value in who.values()):
        example = "${workerId}" if home == "mturk" else "{{%PROLIFIC_PID%}}"
        reason = _("The link you followed still holds a placeholder (such as %(example)s) in %(field)s, where "
                   "%(where)s should have put your own ID, so the study cannot tell who you are. This is a mistake in "
                   "how the study's link was set up, not something you did.") % {
                       "example": example, "field": field, "where": where}
    elif field == "platform":
        takes = _(" or ").join(str(PLATFORM_NAMES[p]) for p in accepted_platforms(study) if p != "anonymous")
        reason = _("This study takes participants from %(platforms)s only, and this link does not come from "
                   "there.") % {"platforms": takes}
    else:
        reason = _("The link's %(field)s is not what this study expects: %(message)s") % {
            "field": field, "message": message}
    return {"heading": _("This link cannot open the study"), "reason": reason, "todo": str(REFUSED_TODO.get(home, "")),
            "field": field}


def participant_page(request: HttpRequest, study: Study, *, who: dict[str, str], query: dict[str, str],
                     preview: dict[str, Any] | None = None) -> HttpResponse:
    """The participant page of `study` for `who`; with `preview` (study_setup.study_preview) the page plays the
    session in the browser and sends nothing (the researcher's preview)."""
    with translation.override(study.language):
        return _participant_page(request, study, who=who, query=query, preview=preview)


def _participant_page(request: HttpRequest, study: Study, *, who: dict[str, str], query: dict[str, str],
                      preview: dict[str, Any] | None) -> HttpResponse:
    special = bool(special_category_questions(questions=study.eligibility_questions))
    config = {
        "slug": study.slug,
        "special_consent": special,
        "kind": study.item_kind,
        "who": who,
        "eligibility": _public_eligibility(questions_asked(study.eligibility_questions)),
        "likert": public_questions(study),
        "rewrite_min_length": study.rewrite_min_length,
        "mturk_submit": mturk_submit_url(query) if who["platform"] == "mturk" else "",
        # The annotator API's root, wherever it is mounted: the session endpoint minus its own path.
        "api": reverse("session-create", kwargs={"slug": study.slug}).removesuffix(f"studies/{study.slug}/sessions/"),
        "timing": timing(study),
        "refused_todo": str(REFUSED_TODO.get(_home(study, who), "")),  # a link the API refuses after all (annotator.js)
        **({"preview": preview} if preview is not None else {}),
    }
    if preview is not None and who["platform"] == "mturk":
        config["mturk_submit"] = MTURK_SUBMIT_HOSTS[1] + "/mturk/externalSubmit"  # shown, never posted (preview.js)
    context = {
        "study": study, "config": config, "consent_html": prose_html(study.consent_text),
        # What is recorded and for how long, generated from the study's settings (free-text answers: telemetry).
        "consent_heading": _(STATEMENT_HEADING), "consent_parts": consent_statement_parts(study=study),
        "special_consent": special, "special_heading": _(SPECIAL_HEADING),
        "special_consent_html": prose_html(study.special_category_consent) if special else "",
        "task_html": prose_html(study.task_description),
        "preview": preview, "preview_who": PREVIEW_WHO.get(who["platform"], ""), **page_language(study),
    }
    return render(request, "annotation/study.html", context)


def page_language(study: Study) -> dict[str, str]:
    """The `lang` and `dir` of a participant page and of its item texts: the study's language."""
    return {"page_language": study.language, "page_direction": language_direction(study.language)}


def _unavailable(request: HttpRequest, context: dict[str, Any], status: int = 200) -> HttpResponse:
    study = context.get("study")
    return render(request, "annotation/unavailable.html", {**context, **(page_language(study) if study else {})},
                  status=status)


@require_GET
def study_entry(request: HttpRequest, slug: str) -> HttpResponse:
    """`/s/<slug>/`: the whole participant flow, rendered once and advanced by static/annotation/annotator.js, in
    the study's language (its gettext catalog; English where the study has none)."""
    study = Study.objects.filter(slug=slug).first()
    if study is None or study.origin != Study.Origin.PLATFORM:  # imported annotations have no participants
        return _unavailable(request, {"reason": "missing"}, status=404)
    with translation.override(study.language):
        return _study_entry(request, study)


def _study_entry(request: HttpRequest, study: Study) -> HttpResponse:
    if study.status != Study.Status.ACTIVE:
        return _unavailable(request, {"reason": study.status, "study": study}, status=410)
    if request.GET.get("assignmentId") == MTURK_PREVIEW:
        # A preview must not open a session (it would hold reservations for a worker who never accepted).
        context = {"reason": "preview", "study": study, "task_html": prose_html(study.task_description)}
        return _unavailable(request, context)
    query = {key: request.GET.get(key, "") for key in request.GET}
    who = participant_from_query(query)
    too_long = [key for key, value in who.items() if len(value) > MAX_PARAM_LENGTH]
    if too_long:
        return _unavailable(request, {"reason": "bad-link", "fields": too_long, "study": study}, status=400)
    mturk = who["platform"] == "mturk"
    try:  # the API refuses such a link too: say why here, before the page would open a session
        entry_check(study=study, platform=who["platform"], participant_id=who["participant"],
                    study_ref=who["study_ref"], session_ref=who["session_ref"],
                    assignment=who["session_ref"] if mturk else "", hit=who["study_ref"] if mturk else "")
    except ApplicationError as error:
        context = {"reason": "refused-link", "study": study, "refusal": refusal(study=study, who=who, error=error)}
        return _unavailable(request, context, status=400)
    return participant_page(request, study, who=who, query=query)


_CATALOG = JavaScriptCatalog.as_view(domain="djangojs", packages=["annotation"])


@require_GET
def javascript_catalog(request: HttpRequest, lang: str) -> HttpResponse:
    """The participant scripts' strings in `lang` (Django's JavaScript catalog: `gettext`, `ngettext`, `interpolate`
    in the browser), the study page names its study's language; an unknown language gets English."""
    with translation.override(language_normalise(lang) or "en"):
        return _CATALOG(request)
