"""What a job's page and its API body link to, for people: the records a job made (by name), the next step once it
is done, and where a person resolves a job that ended "attention". Apps register the links (core imports no app):

- `job_link_register(key, link)`: a parameter or result key → a function of its value returning (admin URL, label)
  or None (a study slug to the study, a corpus id to the corpus by its name). "attention" is the key of what a job
  asks a person to check (`core.jobs.job_attention_of`): its function gets that object and returns where it is
  resolved (a platform's bonus ledger).
- `job_next_step_register(kind, step)`: a job kind → a function of the finished job returning (admin URL, label) of
  the step that follows (a corpus import → generating its instances), or None.
- `job_panel_register(kind, panel)`: a job kind → what its page shows under the fields once it is finished.

No database query here: the registered functions make their own, and a link whose URL cannot be made is left out.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import NoReverseMatch, reverse

from core.jobs import job_attention_of
from core.models import Job

Link = tuple[str, str]

JOB_LINKS: dict[str, Callable[[Any], Link | None]] = {}
JOB_NEXT_STEPS: dict[str, Callable[[Job], Link | None]] = {}
# job kind → what its page shows under the fields once it is finished (e.g. an export's card and downloads); the
# function gets the job and the user, and returns HTML or None.
JOB_PANELS: dict[str, Callable[..., Any]] = {}


def job_link_register(key: str, link: Callable[[Any], Link | None]) -> None:
    JOB_LINKS[key] = link


def job_next_step_register(kind: str, step: Callable[[Job], Link | None]) -> None:
    JOB_NEXT_STEPS[kind] = step


def job_panel_register(kind: str, panel: Callable[..., Any]) -> None:
    JOB_PANELS[kind] = panel


# result key → (admin URL name, what it is) of the record a job made; the record's name comes from the link an app
# registered for the same key (`job_link_register`), else "<what> #<id>".
MADE = {
    "corpus_id": ("admin:tasks_corpus_change", "corpus"),
    "generation_run_id": ("admin:tasks_generationrun_change", "generation run"),
    "agreement_run": ("admin:scoring_agreement_dashboard", "agreement dashboard"),
    "filter_run": ("admin:scoring_filterrun_change", "filter run"),
    "export": ("admin:scoring_benchmarkexport_change", "export"),
    "score_run": ("admin:scoring_scorerun_change", "score run"),
    "evaluation": ("admin:scoring_metricevaluation_change", "metric evaluation"),
    "study_id": ("admin:annotation_study_overview", "study"),
}


def link_for(key: str, value: Any) -> Link | None:
    """The link an app registered for `key`, applied to `value`; None when there is none or it cannot be made."""
    link = JOB_LINKS.get(key)
    if link is None or value in (None, "", [], {}):
        return None
    try:
        return link(value)
    except (NoReverseMatch, ValueError, TypeError):
        return None


def job_made(job: Job) -> list[dict[str, str]]:
    """The records the job made: [{"what", "name", "url"}], named by the apps' links (a corpus by its name)."""
    made = {**MADE, "id": ("admin:scoring_scorerun_change", "score run")} if job.kind == "score_stel" else MADE
    out = []
    for key, (url_name, what) in made.items():
        value = (job.result or {}).get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            continue
        named = link_for(key, value)
        if named is not None:
            out.append({"what": what, "name": named[1], "url": named[0]})
            continue
        try:
            out.append({"what": what, "name": f"{what} #{value}", "url": reverse(url_name, args=[value])})
        except NoReverseMatch:
            continue
    return out


def job_next_step(job: Job) -> dict[str, str] | None:
    """The step after a job that finished well: {"label", "url"} (None while it runs, when it failed, or none)."""
    step = JOB_NEXT_STEPS.get(job.kind)
    if step is None or job.status != Job.Status.DONE:
        return None
    try:
        target = step(job)
    except (NoReverseMatch, ValueError, TypeError, KeyError):
        target = None
    return None if target is None else {"url": target[0], "label": target[1]}


def job_attention(job: Job) -> dict[str, str] | None:
    """What a job that ended "attention" asks a person to check: {"reason", "url", "label"} (the URL and label of the
    page where it is resolved, "" when no app registered one)."""
    attention = job_attention_of(job.result) if job.status == Job.Status.ATTENTION else None
    if attention is None:
        return None
    where = link_for("attention", attention)
    return {"reason": str(attention["reason"]), "url": where[0] if where else "", "label": where[1] if where else ""}
