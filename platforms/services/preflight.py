"""The pre-flight before anything is spent: what publishing the study would cost (the platform's own calculator:
Prolific's; computed from the published fees where there is none: MTurk, the mock), how many people are eligible for
its filters (with a warning when fewer than its places), and a run by a test participant through the real link,
checked afterwards (did the platform take the completion code?). Every door shows the same: `platform_publish`'s
draft step (its summary's "preflight"), `platform_preflight` (services/publish.py: the admin's publish page and the
API's `…/platform/preflight/`), and the test run (the admin, the API's `…/platform/test-run/`). Reads only, except
the test run, which creates a test study on the platform (no money)."""
from __future__ import annotations

from typing import Any

from annotation.models import Participant, Study
from annotation.services.answers import participant_exclude
from annotation.services.study_setup import study_test_study_add
from core.errors import ApplicationError
from platforms.backends import backend_for
from platforms.backends.base import PlatformBackend, StudyPlan, money
from platforms.error_codes import NO_DRAFT, NO_TEST_RUN
from platforms.models import PlatformStudy

# Prolific shows 0 for fewer than 25 eligible participants (it protects their privacy).
FEWER_THAN = 25


def preflight_of(*, backend: PlatformBackend, plan: StudyPlan) -> dict[str, Any]:
    """Cost and eligible people for a plan; a call that fails is said in its part (the rest still answers)."""
    cost, eligible = _cost(backend, plan), _eligible(backend, plan)
    warnings = []
    count = eligible.get("count")
    if isinstance(count, int) and count < plan.places:
        seen = f"fewer than {FEWER_THAN}" if count == 0 else f"only {count}"
        warnings.append(f"{seen} eligible participants for {plan.places} places: the study may never fill. Widen "
                        "the filters (devices, filters, allow list) or lower the places before publishing.")
    warnings += [f"{part}: {value['error']}" for part, value in (("cost", cost), ("eligible participants", eligible))
                 if "error" in value]
    return {"platform": backend.platform, "places": plan.places, "currency": plan.currency,
            "reward_per_place": f"{plan.reward_cents / 100:.2f}", "cost": cost, "eligible": eligible,
            "warnings": warnings}


def _cost(backend: PlatformBackend, plan: StudyPlan) -> dict[str, Any]:
    try:
        cost = backend.study_cost(plan)
    except ApplicationError as exc:  # a PlatformCallError: 429 after its retries, 5xx, no answer
        return {"error": exc.message}
    return {"total": f"{cost.total:.2f}", "rewards": f"{cost.rewards:.2f}",
            "fees": f"{cost.total - cost.rewards:.2f}", "currency": cost.currency,
            "text": f"{money(cost.total, cost.currency)} in all ({money(cost.rewards, cost.currency)} of rewards, "
                    f"{money(cost.total - cost.rewards, cost.currency)} of fees)",
            "source": cost.source, "computed": cost.computed}


def _eligible(backend: PlatformBackend, plan: StudyPlan) -> dict[str, Any]:
    try:
        count = backend.eligible_count(plan)
    except ApplicationError as exc:
        return {"error": exc.message}
    if count is None:
        return {"count": None, "text": f"{backend.platform} does not say how many people are eligible"}
    text = f"fewer than {FEWER_THAN}" if count == 0 else str(count)
    return {"count": count, "places": plan.places, "text": f"{text} eligible participants for {plan.places} places"}


def platform_test_run(*, platform_study: PlatformStudy, email: str = "") -> dict[str, Any]:
    """A test participant's run of the draft through the real link (Prolific's test study: published to the
    workspace's test participants only; with `email`, a test participant is created first). Made once per call:
    each call makes a new test study."""
    if platform_study.state != PlatformStudy.State.DRAFT:
        raise ApplicationError(f"Study {platform_study.study.slug}: a test run needs the draft on the platform, and "
                               f"the study is {platform_study.get_state_display()}.", code=NO_DRAFT, status=409)
    backend = backend_for(platform_study.account)
    try:
        run = backend.test_run(platform_study, email=email)
    finally:
        backend.close()
    if run is None:
        raise ApplicationError(f"{platform_study.get_platform_display()} has no test participants: on MTurk, publish "
                               "from a sandbox account; on the mock platform, open the study's link.",
                               code=NO_TEST_RUN, status=409)
    study_test_study_add(study=platform_study.study, test_study_id=run.test_study_id)  # its link is let in
    return {"study": platform_study.study.slug, "test_study_id": run.test_study_id, "study_url": run.study_url,
            "test_participant_created": bool(run.participant_id),
            "next": "Log in to Prolific as the test participant, take the study from its link to the end, then "
                    "check the test run: Prolific should hold the submission with the study's completion code."}


def platform_test_run_check(*, platform_study: PlatformStudy, test_study_id: str) -> dict[str, Any]:
    """What the platform holds for a test study: each submission's status and whether its code is the study's
    completion (or screened-out) code — the participant flow seen from the platform's side."""
    study = Study.objects.get(pk=platform_study.study_id)  # fresh: the test studies it lets in
    if test_study_id.lower() not in study.prolific_test_study_ids:
        raise ApplicationError(f"Study {study.slug}: {test_study_id} is not one of its test studies.",
                               field="test_study_id", status=404)
    excluded = _test_answers_exclude(study, test_study_id)
    codes = {study.completion_code: "completion", study.screened_out_code: "screened out"}
    backend = backend_for(platform_study.account)
    try:
        rows = backend.test_run_submissions(test_study_id)
    finally:
        backend.close()
    submissions = [{"status": row.status, "code": row.study_code, "code_is": codes.get(row.study_code, "")}
                   for row in rows]
    worked = any(s["code_is"] == "completion" for s in submissions)
    verdict = ("the completion code works: the platform took the test participant's submission with it" if worked
               else "no submission with the study's completion code yet: finish the test run, or check the link's "
                    "redirect to the platform")
    return {"study": study.slug, "test_study_id": test_study_id, "submissions": submissions,
            "completion_code_works": worked, "verdict": verdict, "test_answers_excluded": excluded}


def _test_answers_exclude(study: Study, test_study_id: str) -> int:
    """The test participants' answers are a test, never data: whoever came by the test study's link is excluded
    (every answer invalid, every slot freed; idempotent, so checking again changes nothing)."""
    people = Participant.objects.filter(study=study, excluded=False,
                                        batches__study_ref__iexact=test_study_id).distinct()
    return sum(participant_exclude(participant=p, reason="a Prolific test participant's pre-flight run")
               for p in people)
