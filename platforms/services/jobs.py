"""Background jobs of the platforms app: `platform_job_start` (the admin and the API call it: checks, then queues
the job on commit) and `platform_job_execute` (what the Celery task runs, from the job's row). The command line runs
the same services in-process."""
from __future__ import annotations

from typing import Any

from django.db import transaction

from core.errors import ApplicationError
from core.jobs import job_create, job_enqueue, progress_for
from core.models import Job
from platforms.backends import DEFAULT_PLATFORM, PLATFORM_BACKENDS
from platforms.error_codes import CONFIRMATION_REQUIRED, NO_ACCOUNT
from platforms.models import PlatformAccount, PlatformStudy
from platforms.services import bonuses, decisions, lists, messages, publish, sync
from platforms.services.accounts import account_default, account_get, platform_study_get, study_get
from platforms.services.decisions import platform_decide

KINDS = ("platform_publish", "platform_sync", "platform_decide", "platform_bonus", "platform_message",
         "platform_block_list")
# Jobs that send decisions, pay or message people when applied.
SPENDING = {"platform_decide", "platform_bonus", "platform_message"}


def platform_job_start(*, kind: str, study_slug: str = "", params: dict[str, Any], created_by: str = "") -> Job:
    """Queue one platform job; its parameters live on the row. Checks what can be checked without the platform."""
    if kind not in KINDS:
        raise ApplicationError(f"kind: one of {', '.join(KINDS)}", field="kind")
    if kind != "platform_block_list":
        study = study_get(slug=study_slug)
        if kind == "platform_publish":
            _account_precheck(study, params.get("account") or "")
        else:
            platform_study = platform_study_get(study=study)
            if kind == "platform_decide" and params.get("apply") and not params.get("confirm_rejections"):
                _rejections_unconfirmed(platform_study)
    elif params.get("account"):
        account_get(name=params["account"])

    with transaction.atomic():
        job = job_create(kind=kind, params={"study": study_slug, **params}, created_by=created_by)
        job_enqueue(job=job, task="platforms.job")
    return job


def _account_precheck(study: Any, account_name: str) -> None:
    """The account a publish job would use exists (refused here, not in the worker, when there is none)."""

    if PlatformStudy.objects.filter(study=study).exists():
        return
    if account_name:
        account_get(name=account_name)
        return
    wanted = study.platform if study.platform in PLATFORM_BACKENDS else DEFAULT_PLATFORM
    if account_default(platform=wanted) is None:
        raise ApplicationError(
            f"Study {study.slug} has no platform account: create one (platform_account create …, or the admin's "
            "Crowd platforms › Platform accounts), or set PROLIFIC_API_TOKEN. Without one, the study keeps today's "
            "flow: the participant link, the codes and the decisions CSV.", code=NO_ACCOUNT, status=409,
            field="account")


def _rejections_unconfirmed(platform_study: PlatformStudy) -> None:
    """Refused before a job is queued when the decisions (from the submissions as last synced) hold rejections; the
    job checks again after its own sync."""

    plan = platform_decide(platform_study=platform_study, sync=False)
    if plan["reject"]:
        raise ApplicationError(f"{plan['reject']} rejection(s) would be sent: rejections need an explicit "
                               "confirmation (confirm_rejections).", code=CONFIRMATION_REQUIRED,
                               field="confirm_rejections")


# What a person checks when a job's call ended with an unknown outcome, per job kind: (what the rows are, the ledger
# they are resolved in: its model, as platforms.admin's link for the job's "attention" names it).
ATTENTION = {"platform_bonus": ("bonus row(s)", "bonuspayment"), "platform_decide": ("decision(s)", "decision"),
             "platform_message": ("message recipient(s)", "platformmessage")}


def _unknown_count(kind: str, result: dict[str, Any]) -> int:
    if result.get("dry_run", True):
        return 0  # a dry run sent nothing
    if kind == "platform_bonus":
        return int(((result.get("ledger") or {}).get("unknown") or {}).get("rows") or 0)
    return int(result.get("unknown") or 0)


def job_attention_for(*, kind: str, platform_study: PlatformStudy, result: dict[str, Any]) -> dict[str, Any] | None:
    """The "attention" of a money or message job whose call's outcome is unknown (the job then ends "attention", not
    "done": core/jobs.py): what to check, and the ledger where a person resolves it. Never a retry."""
    n = _unknown_count(kind, result) if kind in ATTENTION else 0
    if not n:
        return None
    what, ledger = ATTENTION[kind]
    check = {"platform_bonus": "whether it was paid", "platform_decide": "whether it was carried out",
             "platform_message": "whether it was delivered"}[kind]
    reason = (f"{n} {what} of study {platform_study.study.slug} have an unknown outcome: the platform may or may not "
              f"have acted on the call, and nothing is sent again automatically. Check on "
              f"{platform_study.get_platform_display()} {check}, then resolve the rows.")
    return {"reason": reason, "ledger": ledger, "platform_study": platform_study.pk, "rows": n}


def platform_job_execute(*, job: Job) -> dict[str, Any]:
    result = _platform_job_run(job)
    if job.kind in ATTENTION:
        platform_study = platform_study_get(study=study_get(slug=job.params.get("study", "")))
        attention = job_attention_for(kind=job.kind, platform_study=platform_study, result=result)
        if attention:
            result = {**result, "attention": attention}
    return result


def _platform_job_run(job: Job) -> dict[str, Any]:
    params = dict(job.params)
    slug = params.pop("study", "")
    by = job.created_by
    if job.kind == "platform_block_list":

        accounts = ([account_get(name=params["account"])] if params.get("account")
                    else list(PlatformAccount.objects.exclude(block_list_id="")))
        return {"accounts": [lists.block_list_sync(account=a) for a in accounts]}
    study = study_get(slug=slug)
    if job.kind == "platform_publish":
        account = account_get(name=params.pop("account")) if params.get("account") else None
        return publish.platform_publish(study=study, account=account, created_by=by, **params)
    platform_study: PlatformStudy = platform_study_get(study=study)
    if job.kind == "platform_sync":
        return sync.platform_sync(platform_study=platform_study, progress=progress_for(job.pk, every=100))
    if job.kind == "platform_decide":
        return decisions.platform_decide(platform_study=platform_study, created_by=by, **params)
    if job.kind == "platform_bonus":
        bonuses.bonus_caps_set(platform_study=platform_study, per_participant=params.pop("cap_per_participant", None),
                               per_study=params.pop("cap_per_study", None))
        for rule in params.pop("rules", None) or []:
            bonuses.bonus_rule_add(platform_study=platform_study, kind=rule["kind"], amount=rule["amount"],
                                   label=rule.get("label", ""))
        return bonuses.platform_bonus(platform_study=platform_study, created_by=by, **params)
    if job.kind == "platform_message":
        return messages.platform_message(platform_study=platform_study, created_by=by, **params)
    raise ApplicationError(f"unknown platform job {job.kind}")
