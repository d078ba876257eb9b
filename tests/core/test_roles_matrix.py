"""The role matrix: every role × every researcher door (API endpoint and method, admin view, admin action).

One rule per door: a request is allowed exactly when the role holds the door's model permission (and the admin
offers the door at all, which is asked of the ModelAdmin as a superuser would be). The doors are discovered from
the URLconf and the admin's registry, so a new endpoint, view or action fails `test_every_door_is_in_the_table`
until it is given its permission here.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.contrib.auth.models import Group, Permission, User
from django.contrib.messages import get_messages
from django.db import transaction
from django.test import Client, RequestFactory, override_settings
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from annotation.models import (
    Batch,
    Participant,
    PracticeAnswer,
    PracticeItem,
    Response,
    RewriteReview,
    RewriteSettings,
    WorkerBlock,
    WritingSignal,
)
from core.models import Job, PersonalDataAccess
from core.personal_data import PERSONAL_DATA_PERMISSION
from core.roles import roles_sync
from platforms.models import (
    BonusPayment,
    BulkBonus,
    CallState,
    Decision,
    PlatformAccount,
    PlatformMessage,
    PlatformStudy,
    PlatformSubmission,
    WebhookEvent,
)
from scoring.models import (
    AgreementRun,
    BenchmarkExport,
    BenchmarkPublication,
    FilterRun,
    MetricEvaluation,
    ModelRun,
    ScoreRun,
)
from scoring.models.content_errors import ContentError, ContentErrorSet
from tasks.models import GenerationRun, NumberSubstitutionCandidate
from tests import factories as f

PROJECT_APPS = ["tasks", "annotation", "platforms", "scoring", "core"]
# A door whose credential is a signature (Prolific's webhook deliveries): refused to every role without one.
SIGNED = "signed"
STAFF = "staff"  # any signed-in staff account, whatever its permissions (the API docs and schema, issue 30)
SPEND = "platforms.spend_platformstudy"
PERSONA = "persona-answer-7919"
ROLES = ["anonymous", "participant", "staff_none", "staff_view", "researcher", "reviewer", "data_steward", "superuser"]
# Staff roles that are a group of core/roles.py (created by `create_roles`): view-only staff is the viewer.
GROUP_OF = {"staff_view": "viewer", "researcher": "researcher", "reviewer": "reviewer",
            "data_steward": "data steward"}
# `make test-fast` tries every door as view-only staff (the role whose writes went through before this test
# existed); `make test` tries all eight roles.
ROLE_PARAMS = [pytest.param(role, marks=() if role == "staff_view" else pytest.mark.slow) for role in ROLES]

# Erasing a person: the raw id is typed in (personal data) and their rows are deleted (annotation/api/erasure.py).
ERASE = ("core.view_personal_data", "annotation.delete_participant")
# API: (url name, method) → the permission it needs; None = public (participant endpoints, the schema).
API_DOORS: dict[tuple[str, str], str | tuple[str, ...] | None] = {
    ("component-list", "get"): "tasks.view_stylecomponent",
    ("component-list", "post"): "tasks.add_stylecomponent",
    ("corpus-list", "get"): "tasks.view_corpus",
    ("corpus-list", "post"): "tasks.add_corpus",
    ("corpus-detail", "get"): "tasks.view_corpus",
    ("corpus-detail", "patch"): "tasks.change_corpus",
    ("corpus-generate", "post"): "tasks.change_corpus",
    ("instance-list", "get"): "tasks.view_taskinstance",
    ("study-list", "get"): "annotation.view_study",
    ("study-list", "post"): "annotation.add_study",
    ("study-detail", "get"): "annotation.view_study",
    ("study-open", "post"): "annotation.change_study",
    ("study-close", "post"): "annotation.change_study",
    ("study-participants", "get"): "annotation.view_participant",
    ("study-responses", "get"): "annotation.view_response",
    ("study-decisions", "get"): "annotation.view_participant",
    ("participant-erase", "post"): ERASE,
    ("study-reviews", "get"): "annotation.view_rewritereview",
    ("study-reviews", "post"): "annotation.change_rewritereview",
    ("study-writing-signals", "get"): "annotation.view_writingsignal",
    ("study-writing-signals", "post"): "annotation.add_writingsignal",
    ("agreement-run-list", "post"): "scoring.add_agreementrun",
    ("agreement-run-detail", "get"): "scoring.view_agreementrun",
    ("filter-run-list", "post"): "scoring.add_filterrun",
    ("annotation-import", "post"): "annotation.add_study",
    ("filter-run-detail", "get"): "scoring.view_filterrun",
    ("score-run-list", "get"): "scoring.view_scorerun",
    ("score-run-list", "post"): "scoring.add_scorerun",
    ("score-run-detail", "get"): "scoring.view_scorerun",
    ("score-run-predictions", "get"): "scoring.view_scorerun",
    ("export-list", "get"): "scoring.view_benchmarkexport",
    ("export-list", "post"): "scoring.add_benchmarkexport",
    ("export-detail", "get"): "scoring.view_benchmarkexport",
    ("export-download", "get"): "scoring.view_benchmarkexport",
    ("metric-evaluation-list", "get"): "scoring.view_metricevaluation",
    ("metric-evaluation-list", "post"): "scoring.add_metricevaluation",
    ("metric-evaluation-detail", "get"): "scoring.view_metricevaluation",
    ("metric-evaluation-plot", "get"): "scoring.view_metricevaluation",
    ("model-run-list", "get"): "scoring.view_modelrun",
    ("model-run-list", "post"): "scoring.add_modelrun",
    ("model-run-detail", "get"): "scoring.view_modelrun",
    ("model-run-answers", "get"): "scoring.view_modelrun",
    ("model-run-stop", "post"): "scoring.change_modelrun",
    ("model-run-guide", "post"): "scoring.change_modelrun",
    ("job-detail", "get"): "core.view_job",
    ("platform-account-list", "get"): "platforms.view_platformaccount",
    ("platform-account-list", "post"): "platforms.add_platformaccount",
    ("study-platform", "get"): "platforms.view_platformstudy",
    ("study-platform-publish", "post"): "platforms.add_platformstudy",
    ("study-platform-sync", "post"): "platforms.change_platformstudy",
    ("study-platform-preflight", "get"): "platforms.view_platformstudy",
    ("study-platform-test-run", "get"): "platforms.view_platformstudy",
    ("study-platform-test-run", "post"): "platforms.change_platformstudy",
    ("study-platform-decisions", "get"): "platforms.view_decision",
    ("study-platform-decisions", "post"): "platforms.add_decision",
    ("study-platform-bonuses", "get"): "platforms.view_bonuspayment",
    ("study-platform-bonuses", "post"): "platforms.add_bonuspayment",
    ("study-platform-messages", "get"): "platforms.view_platformmessage",
    ("study-platform-messages", "post"): "platforms.add_platformmessage",
    ("platform-hook-prolific", "post"): SIGNED,
    **{(name, method): None for name, method in [
        ("ping", "get"), ("ping-db", "get"), ("session-create", "post"), ("session-detail", "get"),
        ("session-consent", "post"), ("session-eligibility", "post"), ("session-start", "post"),
        ("session-next", "get"), ("session-answer", "post"), ("session-practice", "get"),
        ("session-practice", "post")]},
    ("schema", "get"): STAFF, ("api-docs", "get"): STAFF,
}

# Admin views of our own (beyond Django's changelist/add/change/delete/history): url name → (method, permission).
ADMIN_VIEWS: dict[str, tuple[str, str | tuple[str, ...]]] = {
    "auth_user_password_change": ("get", "auth.change_user"),
    "tasks_corpus_import": ("get", "tasks.add_corpus"),
    "tasks_corpus_generate": ("get", "tasks.change_corpus"),
    "tasks_screeningquestion_import": ("get", "tasks.add_screeningquestion"),
    "tasks_screeningquestion_load_published": ("post", "tasks.add_screeningquestion"),
    "annotation_study_create": ("get", "annotation.add_study"),
    "annotation_study_create_kind": ("get", "annotation.add_study"),
    "annotation_study_preview": ("get", "annotation.view_study"),
    "annotation_study_overview": ("get", "annotation.view_study"),
    "annotation_study_participant_preview": ("get", "annotation.view_study"),
    "annotation_study_open": ("post", "annotation.change_study"),
    "annotation_participant_erase": ("get", ERASE),
    "annotation_rewritereview_queue": ("get", "annotation.change_rewritereview"),
    "annotation_rewritereview_decide": ("post", "annotation.change_rewritereview"),
    "annotation_rewritereview_block": ("post", "annotation.change_rewritereview"),
    "annotation_rewritereview_signals": ("post", "annotation.add_writingsignal"),
    "scoring_agreement_start": ("get", "scoring.add_agreementrun"),
    "scoring_agreement_study": ("get", "scoring.view_agreementrun"),
    "scoring_agreement_dashboard": ("get", "scoring.view_agreementrun"),
    "scoring_agreement_plot": ("get", "scoring.view_agreementrun"),
    "scoring_agreement_filter": ("post", "scoring.add_filterrun"),
    "scoring_agreement_aggregate": ("post", "scoring.add_agreementrun"),
    "scoring_agreement_import": ("get", "annotation.add_study"),
    "scoring_metricevaluation_start": ("get", "scoring.add_metricevaluation"),
    "scoring_benchmarkexport_start": ("get", "scoring.add_benchmarkexport"),
    "scoring_benchmarkexport_download": ("get", "scoring.view_benchmarkexport"),
    "scoring_scorerun_predictions": ("get", "scoring.view_scorerun"),
    "scoring_scorerun_start": ("get", "scoring.add_scorerun"),
    "scoring_modelrun_start": ("get", "scoring.add_modelrun"),
    "scoring_modelrun_stop": ("post", "scoring.change_modelrun"),
    "scoring_modelrun_guide": ("post", "scoring.change_modelrun"),
    "platforms_platformstudy_publish": ("get", "platforms.add_platformstudy"),
    "platforms_platformstudy_sync": ("post", "platforms.change_platformstudy"),
    "platforms_platformstudy_decide": ("get", "platforms.view_decision"),
    "platforms_platformstudy_bonus": ("get", "platforms.view_bonuspayment"),
    "platforms_platformstudy_message": ("get", "platforms.view_platformstudy"),
}
# Doors that move money or message people when applied: (url name, body) → the permission. A dry run of the same door
# needs only the model permission above; applying needs the permission to spend.
SPEND_DOORS: dict[tuple[str, str], tuple[dict[str, Any], str]] = {
    ("study-platform-decisions", "apply"): ({"apply": True, "confirm_rejections": True}, SPEND),
    ("study-platform-bonuses", "apply"): ({"apply": True, "flat": "0.50"}, SPEND),
    ("study-platform-messages", "apply"): ({"apply": True, "body": "Thank you."}, SPEND),
    ("study-platform-publish", "publish"): ({"publish": True}, SPEND),
}
# Django's own site views (login, index, password change, …): staff-only by Django, not model doors.
DJANGO_SITE_VIEWS = {"index", "login", "logout", "password_change", "password_change_done", "autocomplete",
                     "jsi18n", "view_on_site", "app_list"}
GENERIC_SUFFIXES = {"changelist": "view", "add": "add", "change": "view", "delete": "delete", "history": "view"}

# Admin actions: (model label, action) → the permission it needs.
ADMIN_ACTIONS: dict[tuple[str, str], str] = {
    ("tasks.corpus", "generate_instances"): "tasks.change_corpus",
    ("tasks.numbersubstitutioncandidate", "accept"): "tasks.change_numbersubstitutioncandidate",
    ("tasks.numbersubstitutioncandidate", "reject"): "tasks.change_numbersubstitutioncandidate",
    ("tasks.numbersubstitutioncandidate", "build_corpus"): "tasks.change_numbersubstitutioncandidate",
    ("annotation.study", "open_studies"): "annotation.change_study",
    ("annotation.study", "close_studies"): "annotation.change_study",
    ("annotation.study", "export_csv"): "annotation.view_response",
    ("annotation.study", "export_jsonl"): "annotation.view_response",
    ("annotation.study", "export_decisions_prolific"): "annotation.view_participant",
    ("annotation.study", "export_decisions_mturk"): "annotation.view_participant",
    ("annotation.study", "build_corpus_from_rewrites"): "tasks.add_corpus",
    ("annotation.participant", "exclude_participants"): "annotation.change_participant",
    ("tasks.screeningquestion", "duplicate_as_private"): "tasks.add_screeningquestion",
    ("scoring.contenterror", "accept"): "scoring.change_contenterror",
    ("scoring.contenterror", "reject"): "scoring.change_contenterror",
    ("scoring.contenterror", "reset"): "scoring.change_contenterror",
    ("scoring.contenterrorset", "create_rating_study"): "scoring.change_contenterrorset",
    # django-axes' action, given the delete permission it needs (core/admin/login_attempts.py)
    ("axes.accessattempt", "cleanup_expired_attempts"): "axes.delete_accessattempt",
    ("platforms.bonuspayment", "export_csv"): "platforms.view_bonuspayment",
    ("platforms.bonuspayment", "resolve_paid"): SPEND,
    ("platforms.bonuspayment", "resolve_not_paid"): SPEND,
    ("platforms.decision", "resolve_done"): SPEND,
    ("platforms.decision", "resolve_not_done"): SPEND,
}


def _walk(patterns: list, namespace: str | None = None, prefix: str = "") -> list[tuple[str, Any, str | None]]:
    found = []
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            found += _walk(pattern.url_patterns, pattern.namespace or namespace, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            found.append((prefix + str(pattern.pattern), pattern, namespace))
    return found


def api_doors() -> list[tuple[str, str]]:
    doors = []
    for route, pattern, namespace in _walk(get_resolver().url_patterns):
        if namespace is None and route.startswith("api/") and pattern.name:
            view_class = getattr(pattern.callback, "view_class", None) or getattr(pattern.callback, "cls", None)
            doors += [(pattern.name, m) for m in ("get", "post", "put", "patch", "delete") if hasattr(view_class, m)]
    return sorted(doors)


def admin_views() -> list[str]:
    return sorted({p.name for _, p, ns in _walk(get_resolver().url_patterns) if ns == "admin" and p.name})


def _model_for(name: str) -> tuple[type, str] | None:
    for model in admin.site._registry:
        stem = f"{model._meta.app_label}_{model._meta.model_name}_"
        if name.startswith(stem) and name[len(stem):] in GENERIC_SUFFIXES:
            return model, name[len(stem):]
    return None


def admin_actions() -> list[tuple[str, str]]:
    superuser = User(is_superuser=True, is_staff=True, is_active=True)
    request = RequestFactory().get("/admin/")
    request.user = superuser
    return sorted((model._meta.label_lower, action) for model, model_admin in admin.site._registry.items()
                  for action in model_admin.get_actions(request) if action != "delete_selected")


def test_every_door_is_in_the_table() -> None:
    """A new endpoint, admin view or action must be given its permission here (fails until it is)."""
    missing_api = [door for door in api_doors() if door not in API_DOORS]
    missing_views = [name for name in admin_views()
                     if name not in ADMIN_VIEWS and name not in DJANGO_SITE_VIEWS and _model_for(name) is None]
    missing_actions = [door for door in admin_actions() if door not in ADMIN_ACTIONS]
    assert not (missing_api or missing_views or missing_actions), (missing_api, missing_views, missing_actions)
    stale = [d for d in API_DOORS if d not in api_doors()] + [n for n in ADMIN_VIEWS if n not in admin_views()]
    assert not stale, f"doors in the table that no longer exist: {stale}"


# --- the world each door is tried in --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[dict[str, Any]]:
    """Built once for the module's 1,400 cases, as Django's `setUpTestData` does: inside an outer transaction that
    is rolled back at the end, while every test runs in a savepoint of it (pytest-django's `db`), so whatever a
    door changes is undone before the next case."""
    tmp_path = tmp_path_factory.mktemp("role_matrix")
    with django_db_blocker.unblock(), override_settings(MEDIA_ROOT=str(tmp_path)), transaction.atomic():
        try:
            yield _world_build(tmp_path)
        finally:
            transaction.set_rollback(True)


def _world_build(tmp_path: Path) -> dict[str, Any]:
    study, items = f.annotated_study(answers=[["S2-S1"] * 3, ["S1-S2", "S2-S1", "S2-S1"]])
    # Ids as long as a platform's, so a scan of a page for them finds nothing by chance.
    for n, person in enumerate(study.participants.order_by("pk")):
        Participant.objects.filter(pk=person.pk).update(external_id=f"5e11{n:020d}", persona={"age": PERSONA})
    participant = study.participants.order_by("pk").first()
    batch = Batch.objects.create(study=study, participant=participant, number=1, token="t" * 40)
    job = Job.objects.create(kind="corpus_import", status=Job.Status.DONE)
    run = AgreementRun.objects.create(study=study, params={"k": 3, "m": 2, "seed": 0, "resamples": 10},
                                      result={"fleiss_kappa": 0.1}, computed_at=timezone.now())
    filter_run = FilterRun.objects.create(study=study, min_correct=2, annotators_per_item=3)
    export_file = tmp_path / "exports" / "b.tsv"
    export_file.parent.mkdir()
    export_file.write_text("ID\tAnchor 1\n")
    export = BenchmarkExport.objects.create(format=BenchmarkExport.Format.STEL_TSV, path=str(export_file), n_rows=1,
                                            study=study, params={})
    BenchmarkPublication.objects.create(export=export, repo="org/bench", endpoint="http://127.0.0.1:9")
    predictions = tmp_path / "score_runs" / "p.tsv"
    predictions.parent.mkdir()
    predictions.write_text("ID\tmethod\n")
    score_run = ScoreRun.objects.create(benchmark_paths=[str(export_file)], methods=["char3gram"],
                                        predictions_path=str(predictions))
    evaluation = MetricEvaluation.objects.create(study=study, question="q", metrics=["bleu"])
    model_run = ModelRun.objects.create(study=study, label="fake", backend="openai", model="fake",
                                        base_url="http://127.0.0.1:9/v1")
    corpus = items[0].instance.corpus
    GenerationRun.objects.create(corpus=corpus, setup="quadruple", seed=1)
    f.ParallelPairFactory(corpus=corpus)
    f.ScreeningQuestionFactory()
    Group.objects.create(name="annotators")
    User.objects.create_user("someone")
    NumberSubstitutionCandidate.objects.create(text="gr8 day", translation="great day", source_file="r.txt",
                                               line_number=1)
    practice = PracticeItem.objects.create(study=study, anchor_1="a", anchor_2="b", sentence_1="c", sentence_2="d",
                                           correct_answer="S1-S2")
    PracticeAnswer.objects.create(participant=participant, item=practice, answer="S1-S2", is_correct=True)
    RewriteReview.objects.create(response=Response.objects.filter(study=study).first())
    WritingSignal.objects.create(response=Response.objects.filter(study=study).first(), signal="mostly_pasted",
                                 score=1, threshold=0.5, flagged=True, evidence="all pasted",
                                 computed_at=timezone.now())
    RewriteSettings.objects.create(study=study)
    WorkerBlock.objects.create(platform="prolific", external_id="a" * 24)
    PersonalDataAccess.objects.create(door="admin", what="participants (list)", people=1)
    error_set = ContentErrorSet.objects.create(name="errors", source="pairs.tsv", error_types=["deletion"])
    ContentError.objects.create(error_set=error_set, pair_id="1", source="s", rewrite="r one", erroneous="r",
                                error_type="deletion", rule="phrase",
                                edit={"start": 1, "end": 5, "before": " one", "after": ""})
    seen = {"user_agent": "ua", "ip_address": "192.0.2.1", "username": "someone", "http_accept": "*/*",
            "path_info": "/admin/login/"}
    AccessAttempt.objects.create(**seen, get_data="", post_data="", failures_since_start=1)
    AccessLog.objects.create(**seen)
    AccessFailureLog.objects.create(**seen)
    roles_sync()  # the groups `create_roles` makes: the README's recipe, tried here door by door
    for role in ROLES[2:]:
        user = User.objects.create_user(role, password="pw", is_staff=True, is_superuser=role == "superuser")
        if role in GROUP_OF:
            user.groups.add(Group.objects.get(name=GROUP_OF[role]))
    platform_study = _platform_world(study, participant)
    world = {"study": study, "participant": participant, "batch": batch, "job": job, "run": run,
             "raw_ids": [*study.participants.values_list("external_id", flat=True), "a" * 24],
            "filter_run": filter_run, "export": export, "score_run": score_run, "evaluation": evaluation,
            "model_run": model_run,
            "corpus": corpus, "platform_study": platform_study}
    # Each role's cookies, made once: a staff user's session, the participant's study cookies.
    world["cookies"] = {"anonymous": {}}
    for role in ROLES[1:]:
        client = Client()
        if role == "participant":
            client.get(f"/s/{study.slug}/?PROLIFIC_PID=P1&STUDY_ID=s&SESSION_ID=x")
        else:
            client.force_login(User.objects.get(username=role))
        world["cookies"][role] = {key: morsel.value for key, morsel in client.cookies.items()}
    return world


def _platform_world(study: Any, participant: Any) -> PlatformStudy:
    """A study on a (never called) Prolific account, with one of each platform record."""
    account = PlatformAccount.objects.create(name="lab", platform="prolific", token_env="ROLE_MATRIX_NO_TOKEN",
                                             api_url="http://127.0.0.1:9/")
    ps = PlatformStudy.objects.create(study=study, account=account, platform="prolific", state="published",
                                      external_id="e" * 24)
    sub = PlatformSubmission.objects.create(platform_study=ps, external_id="s" * 24, worker_id=participant.external_id,
                                            participant=participant, status="APPROVED")
    Decision.objects.create(platform_study=ps, submission=sub, worker_id=sub.worker_id, kind="approve",
                            state=CallState.UNKNOWN)
    bulk = BulkBonus.objects.create(platform_study=ps, csv="x,1.00\n", total=1, currency="GBP",
                                    state="pay_unknown", pay_called_at=timezone.now())
    BonusPayment.objects.create(platform_study=ps, worker_id=sub.worker_id, submission=sub, source="flat:x",
                                amount=1, currency="GBP", state="unknown", bulk=bulk)
    PlatformMessage.objects.create(platform_study=ps, group_key=uuid.uuid4(), recipients=[sub.worker_id], body="hi")
    WebhookEvent.objects.create(account=account, event_id="ev-1", event_type="submission.status.change")
    return ps


def _perms(codenames: list[str] | None = None, actions: tuple[str, ...] = ()) -> list[Permission]:
    query = Permission.objects.filter(content_type__app_label__in=PROJECT_APPS)
    return list(query.filter(codename__regex=rf"^({'|'.join(actions)})_")) if actions else list(query)


def _client(role: str, world: dict[str, Any]) -> tuple[Client, User | None]:
    """A fresh client with the role's cookies (no message or CSRF cookie left from an earlier case); the user is
    read again, so no permission cache is carried over either."""
    client = Client()
    for key, value in world["cookies"][role].items():
        client.cookies[key] = value
    if role == "participant":
        # Holds a session token (the participant's only credential) and its study's cookies, nothing else.
        client.defaults["HTTP_AUTHORIZATION"] = f"Token {world['batch'].token}"
    if role in ("anonymous", "participant"):
        return client, None
    return client, User.objects.get(username=role)


def _has(user: User | None, perm: str | tuple[str, ...] | None) -> bool:
    """A door needing several permissions (a tuple) is open only to users holding them all."""
    if perm == STAFF:
        return bool(user and user.is_active and user.is_staff)
    perms = (perm,) if isinstance(perm, str) else perm
    return perms is None or bool(user and user.is_active and user.is_staff and user.has_perms(perms))


def _kwargs(name: str, world: dict[str, Any]) -> dict[str, Any]:
    by_name = {
        "corpus-detail": {"pk": world["corpus"].pk}, "corpus-generate": {"pk": world["corpus"].pk},
        "agreement-run-detail": {"run_id": world["run"].pk}, "filter-run-detail": {"run_id": world["filter_run"].pk},
        "score-run-detail": {"pk": world["score_run"].pk}, "score-run-predictions": {"pk": world["score_run"].pk},
        "metric-evaluation-detail": {"pk": world["evaluation"].pk},
        "metric-evaluation-plot": {"pk": world["evaluation"].pk}, "job-detail": {"job_id": world["job"].pk},
        "export-detail": {"pk": world["export"].pk}, "export-download": {"pk": world["export"].pk, "which": "data"},
        "scoring_agreement_study": {"slug": world["study"].slug},
        "auth_user_password_change": {"id": User.objects.get(username="someone").pk},
        "scoring_agreement_dashboard": {"run_id": world["run"].pk},
        "scoring_agreement_plot": {"run_id": world["run"].pk, "name": "votes", "fmt": "svg"},
        "scoring_agreement_filter": {"run_id": world["run"].pk},
        "scoring_agreement_aggregate": {"run_id": world["run"].pk},
        "scoring_benchmarkexport_download": {"pk": world["export"].pk, "which": "data"},
        "scoring_scorerun_predictions": {"pk": world["score_run"].pk},
        **{name: {"pk": world["model_run"].pk} for name in (
            "model-run-detail", "model-run-answers", "model-run-stop", "model-run-guide", "scoring_modelrun_stop",
            "scoring_modelrun_guide")},
        "annotation_study_preview": {"pk": world["study"].pk}, "annotation_study_open": {"pk": world["study"].pk},
        "annotation_study_overview": {"pk": world["study"].pk},
        "annotation_study_create_kind": {"kind": "quadruple"},
        "annotation_study_participant_preview": {"pk": world["study"].pk, "platform": "prolific"},
        "platforms_platformstudy_publish": {"study_id": world["study"].pk},
        "tasks_corpus_generate": {"pk": world["corpus"].pk},
        "platform-hook-prolific": {"name": "lab"},
    }
    if name.startswith("platforms_platformstudy_") and name != "platforms_platformstudy_publish":
        return {"pk": world["platform_study"].pk}
    if name in by_name:
        return by_name[name]
    if name.startswith(("study-", "session-create")) and name != "study-list":
        return {"slug": world["study"].slug}
    if name.startswith("session-"):
        return {"token": world["batch"].token}
    return {}


def _denied(response: Any) -> bool:
    if response.status_code in (401, 403):
        return True
    return response.status_code == 302 and "/admin/login/" in response.get("Location", "")


# --- the matrix ------------------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLE_PARAMS)
@pytest.mark.parametrize("door", sorted(API_DOORS), ids=":".join)
def test_api_door(db, world, role: str, door: tuple[str, str]) -> None:
    """Allowed exactly with the door's permission; a GET also shows personal data only as `_personal_data` says."""
    name, method = door
    client, user = _client(role, world)
    url = reverse(name, kwargs=_kwargs(name, world))
    reads_personal_data = method == "get" and (role, f"api:{name}") in PERSONAL_DATA_CASES
    logged = PersonalDataAccess.objects.count() if reads_personal_data else 0
    response = getattr(client, method)(url, {}, content_type="application/json") if method != "get" else client.get(url)
    perm = API_DOORS[door]
    expected = False if perm == SIGNED else _has(user, perm)
    assert _denied(response) is not expected, (role, door, response.status_code, response.content[:300])
    if reads_personal_data:
        _personal_data(role, f"api:{name}", response, user, logged, world)


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLE_PARAMS)
@pytest.mark.parametrize("door", sorted(SPEND_DOORS), ids=":".join)
def test_spending_door(db, world, role: str, door: tuple[str, str]) -> None:
    """Applying decisions, paying, messaging and publishing: only a role allowed to spend money (no job is queued
    for anyone else)."""
    name, _ = door
    body, perm = SPEND_DOORS[door]
    client, user = _client(role, world)
    jobs = Job.objects.count()
    response = client.post(reverse(name, kwargs=_kwargs(name, world)), body, content_type="application/json")
    expected = _has(user, perm) and _has(user, API_DOORS[(name, "post")])
    assert _denied(response) is not expected, (role, door, response.status_code, response.content[:300])
    if not expected:
        assert Job.objects.count() == jobs


def _admin_doors() -> list[str]:
    return sorted(set(ADMIN_VIEWS) | {n for n in admin_views() if _model_for(n) is not None})


def _object_for(model: type) -> Any:
    return model._default_manager.order_by("pk").first()


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLE_PARAMS)
@pytest.mark.parametrize("name", _admin_doors())
def test_admin_view(db, world, role: str, name: str) -> None:
    """Allowed exactly when offered and permitted; a GET also shows personal data only as `_personal_data` says."""
    client, user = _client(role, world)
    if name in ADMIN_VIEWS:
        method, perm = ADMIN_VIEWS[name]
        offered = True
        kwargs = _kwargs(name, world)
    else:
        model, suffix = _model_for(name)
        model_admin = admin.site._registry[model]
        perm = f"{model._meta.app_label}.{GENERIC_SUFFIXES[suffix]}_{model._meta.model_name}"
        request = RequestFactory().get("/admin/")
        request.user = User(is_superuser=True, is_staff=True, is_active=True)
        viewing = model_admin.has_view_or_change_permission
        checker = {"changelist": viewing, "add": model_admin.has_add_permission, "change": viewing,
                   "history": viewing, "delete": model_admin.has_delete_permission}[suffix]
        offered = checker(request)
        method = "get"
        obj = _object_for(model)
        if obj is None and suffix in ("change", "delete", "history"):
            pytest.fail(f"the world has no {model._meta.label} to open")
        kwargs = {"object_id": obj.pk} if suffix in ("change", "delete", "history") else {}
    reads_personal_data = method == "get" and (role, f"admin:{name}") in PERSONAL_DATA_CASES
    logged = PersonalDataAccess.objects.count() if reads_personal_data else 0
    response = getattr(client, method)(reverse(f"admin:{name}", kwargs=kwargs))
    expected = offered and _has(user, perm)
    assert _denied(response) is not expected, (role, name, response.status_code, response.content[:300])
    if reads_personal_data:
        _personal_data(role, f"admin:{name}", response, user, logged, world)


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLE_PARAMS)
@pytest.mark.parametrize("door", sorted(ADMIN_ACTIONS), ids=":".join)
def test_admin_action(db, world, role: str, door: tuple[str, str]) -> None:
    """Posting the action as the changelist's form does: refused (no effect) without the permission."""
    label, action = door
    model = next(m for m in admin.site._registry if m._meta.label_lower == label)
    client, user = _client(role, world)
    obj = model._default_manager.order_by("pk").first()
    if label == "annotation.participant":
        obj = world["participant"]
    changelist = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    response = client.post(changelist, {"action": action, "_selected_action": [obj.pk], "index": 0})
    notes = [str(m) for m in get_messages(response.wsgi_request)] if hasattr(response, "wsgi_request") else []
    # Refused: 403, Django's "No action selected" (the action is not among the user's choices), or the changelist
    # shown again because the user has no actions at all.
    shown_again = response.status_code == 200 and response.context is not None and "cl" in response.context
    refused = _denied(response) or shown_again or any("No action selected" in note for note in notes)
    expected = _has(user, ADMIN_ACTIONS[door])
    assert refused is not expected, (role, door, response.status_code, notes)
    if label == "annotation.participant":
        world["participant"].refresh_from_db()
        assert world["participant"].excluded is expected


# --- personal data: what each door shows, and what it logs ------------------------------------------------------


# The platform's bulk-decision file names each worker by the id the platform knows (its upload page needs it).
RAW_FOR_THE_PLATFORM = {"study-decisions"}


def _get_doors() -> list[str]:
    """Every page and body a GET reads: API endpoints and admin views (generic and custom)."""
    api = [f"api:{name}" for name, method in sorted(API_DOORS) if method == "get" and API_DOORS[(name, method)]
           not in (None, SIGNED, STAFF)]
    views = [f"admin:{name}" for name in _admin_doors() if (ADMIN_VIEWS.get(name) or ("get", ""))[0] == "get"
             and not name.endswith("_delete")]
    return api + views


# The staff roles each GET door is read as for personal data (the checks of `_personal_data`, made on the response
# of test_api_door or test_admin_view: one request per role and door serves both).
PERSONAL_DATA_ROLES = ("staff_view", "researcher", "reviewer", "data_steward", "superuser")
PERSONAL_DATA_CASES = frozenset((role, door) for role in PERSONAL_DATA_ROLES for door in _get_doors())


def test_every_get_door_is_read_for_personal_data_by_a_matrix_case() -> None:
    """Each (role, GET door) of PERSONAL_DATA_CASES is one of the cases test_api_door or test_admin_view runs, so none
    goes unread."""
    api_cases = {(role, f"api:{name}") for role in ROLES for name, method in API_DOORS if method == "get"}
    admin_cases = {(role, f"admin:{name}") for role in ROLES for name in _admin_doors()
                   if (ADMIN_VIEWS.get(name) or ("get", ""))[0] == "get"}
    assert PERSONAL_DATA_CASES and PERSONAL_DATA_CASES <= api_cases | admin_cases


def _personal_data(role: str, door: str, response: Any, user: User | None, logged: int, world: dict[str, Any]) -> None:
    """Raw platform ids and persona answers reach only those holding the personal-data permission, and every page or
    body that shows them to one writes exactly one access-log row (`logged`: the rows before the request); one that
    shows none writes none."""
    name = door.split(":", 1)[1]
    body = b"".join(response.streaming_content) if response.streaming else response.content
    text = body.decode("utf-8", errors="replace")
    shown = [raw for raw in world["raw_ids"] if raw in text]
    new_rows = PersonalDataAccess.objects.count() - logged
    if name in RAW_FOR_THE_PLATFORM:
        return
    assert user is not None, (role, door)
    if not user.has_perm(PERSONAL_DATA_PERMISSION):
        assert not shown and PERSONA not in text, (role, door)
        assert new_rows == 0, (role, door)
    elif shown and response.status_code == 200:
        assert new_rows == 1, (role, door, shown)
    else:
        assert new_rows == 0, (role, door)
