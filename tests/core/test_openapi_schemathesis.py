"""The OpenAPI schema tells the truth: schemathesis (its command line, as a user would run it) against a live server,
as a superuser, as an anonymous client and as the view-only role, bounded to a minute or so on the 2-core CI machine;
then a hostile-body phase (tests/core/hostile_bodies.py: deep nesting, a NUL in every string position, numbers no
field stores, very long strings) on every operation that takes a body, which must answer 4xx, never 5xx.

Every check schemathesis has runs (server errors, status codes, response bodies, schema-valid requests accepted and
schema-violating ones refused, …). A failure fails the test unless `ALLOWED` lists it with its reason: a refusal
that depends on the database's state or on two fields together, which a JSON schema cannot express (docs/api-schema.md
lists them too). Figures of the run are in docs/api-schema.md.
"""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
import requests
from django.contrib.auth.models import Group, User
from django.core.management import call_command

from tests.core.hostile_bodies import Probe, probes
from tests.gunicorn_server import gunicorn
from tests.helpers import assert_api_error

REPO = Path(__file__).resolve().parents[2]
ST = Path(sys.executable).parent / "st"
CONFIG = Path(__file__).with_name("schemathesis.toml")
PASSWORD = "schema-check-password"
ADMIN = "admin"  # pytest-django's admin_user
VIEWER = "schema-viewer"

# Refusals of schema-valid requests that are the documented behaviour: (operation, error code, a fragment of the
# message) -> the reason. Each is a rule about the database's state or about two fields together, which a JSON
# schema of each field cannot state; the message names it. A new refusal (another code or message) fails the test.
STATE = "depends on the database's state, which a schema cannot know"
TOGETHER = "a rule about two fields together, which a JSON schema of each field cannot state"
REGISTRY = "a registry filled at start-up, named in the message"
RATINGS_CONTENT = "depends on the uploaded files' content (columns, lines, values), which a schema cannot state"
ALLOWED: dict[tuple[str, str, str], str] = {
    ("POST /api/v1/components/", "invalid_component", "two different"): f"{TOGETHER}: the labels must differ",
    ("POST /api/v1/components/", "invalid", "already exists"): f"{STATE}: the name is taken",
    ("POST /api/v1/corpora/", "no_files", "upload at least one file"): f"{TOGETHER}: each format needs its files",
    ("POST /api/v1/corpora/", "invalid", "The submitted file is empty"):
        "an empty upload holds no corpus (a binary string in a schema has no minimum length to say so)",
    ("POST /api/v1/corpora/", "aligned_files_by_role", "in their own fields"):
        f"{TOGETHER}: an aligned corpus takes its two files by role (style_1_file and style_2_file), not `files`",
    ("POST /api/v1/corpora/", "wrong_file_field", "are for the aligned format"):
        f"{TOGETHER}: the style-1/style-2 file fields are the aligned format's; every other format takes `files`",
    ("POST /api/v1/corpora/", "missing_component", "required for this format"):
        f"{TOGETHER}: every format but `stel` needs a component",
    ("POST /api/v1/corpora/", "unknown_licence", "SPDX identifier"): f"{REGISTRY} (core/licences)",
    ("PATCH /api/v1/corpora/{id}/", "unknown_licence", "SPDX identifier"): f"{REGISTRY} (core/licences)",
    ("POST /api/v1/corpora/{id}/generate/", "invalid_count", "must be between 1 and the corpus"):
        f"{STATE}: at most as many instances as the corpus has pairs",
    **{("POST /api/v1/annotation-imports/", code, fragment): RATINGS_CONTENT for code, fragment in (
        ("missing_columns", "missing column"), ("missing_columns", "no rater columns"), ("missing_columns", "give the"),
        ("missing_columns", "is not NAME=VALUE"), ("missing_columns", "is not one of"),
        ("missing_columns", "different names"), ("missing_columns", "rater id column"), ("empty_file", "no "),
        ("bad_rows", "bad row"),
        ("bad_encoding", "not valid UTF-8"), ("unknown_file_type", "are read from"), ("invalid_json", "JSON"),
        ("invalid_scale", ""), ("not_numeric_scale", "numeric scale"), ("invalid_level", ""),
        ("invalid_question", ""), ("duplicate_id", ""))},
    **{("POST /api/v1/annotation-imports/", code, ""): f"{STATE}: the study of that slug, its kind and items"
       for code in ("study_not_imported", "study_kind_mismatch", "scale_mismatch", "item_text_mismatch",
                    "duplicate_response", "correct_mismatch")},
    ("POST /api/v1/agreement-runs/", "invalid_level", "are nominal"):
        f"{STATE}: the level must fit the study's answers",
    ("POST /api/v1/filter-runs/", "seed_required", "give a seed"): f"{TOGETHER}: balancing needs a seed",
    ("POST /api/v1/exports/", "invalid_format", "the ids-only form is written as"):
        f"{TOGETHER}: ids_only needs a format that can leave the texts out (not STEL TSV)",
    ("POST /api/v1/exports/", "nothing_to_export", "nothing to export"):
        f"{STATE}: no task instance matches the selection",
    ("POST /api/v1/metric-evaluations/", "unknown_metric", "known metrics"): f"{REGISTRY} (scoring/metrics)",
    ("POST /api/v1/score-runs/", "invalid", "choose a benchmark export or give"):
        f"{TOGETHER}: an export or a benchmark path, at least one",
    ("POST /api/v1/score-runs/", "invalid", "compare needs two or more of the methods"):
        f"{TOGETHER}: `compare` names methods of `methods`, two or more",
    ("POST /api/v1/score-runs/", "path_not_allowed", "outside the data folders"):
        "a server-side benchmark path must lie in the folders the server's configuration names (STYLECROWD_DATA_DIRS)",
    ("POST /api/v1/model-runs/", "unknown_backend", "unknown back-end"): f"{REGISTRY} (core/model_backends)",
    ("POST /api/v1/studies/", "invalid", "An ordering study needs a setup"):
        f"{TOGETHER}: an ordering study needs its setup",
    ("POST /api/v1/studies/", "invalid", "or a corpus and its side (one of the two)"):
        f"{TOGETHER}: a rewrite study's sources come from the body or a corpus, exactly one",
    ("POST /api/v1/studies/", "invalid", "each needs a name and a list of choices"):
        f"{TOGETHER}: an eligibility question needs its choices",
    ("POST /api/v1/studies/", "invalid", "Posterior stop needs adaptive collection"):
        f"{TOGETHER}: stopping on the posterior needs adaptive collection (`adaptive`)",
    ("POST /api/v1/studies/", "invalid", "Posterior drop needs a posterior stop above it"):
        f"{TOGETHER}: a posterior drop threshold needs a posterior stop above it",
    ("POST /api/v1/platform-accounts/", "invalid", "not both or neither"):
        f"{TOGETHER}: a token or the name of the variable that holds it, exactly one",
    ("POST /api/v1/platform-accounts/", "platform_unauthorized", "found no AWS credentials"):
        f"{STATE}: MTurk needs AWS credentials on the server",
    ("POST /api/v1/studies/{slug}/platform/publish/", "invalid", "Enter a valid URL"):
        "Django's URL check (a scheme and a host with a domain) is stricter than the schema's `uri` format",
    ("POST /api/v1/studies/{slug}/sessions/", "invalid", "is required for platform"):
        f"{TOGETHER}: a Prolific or MTurk arrival needs its participant id",
    ("POST /api/v1/studies/{slug}/sessions/", "invalid_link", "unreplaced placeholder"):
        "a link field still holding a placeholder ({{%PROLIFIC_PID%}}) or a control character: the platform did "
        "not fill the link, and the participant is told to open it from the platform",
    ("POST /api/v1/sessions/{token}/eligibility/", "invalid", "Please answer these questions"):
        f"{STATE}: the answers must match the study's own questions (the refusal speaks the study's language; this "
        "seeded study's is English)",
    ("POST /api/v1/sessions/{token}/eligibility/", "invalid", "answers to questions this study does not ask"):
        f"{STATE}: an answer must name one of the study's own questions",
    ("POST /api/v1/annotation-imports/", "invalid_arguments", "rater id columns"):
        "two fields together: rater_ids names columns of a wide file, so it needs wide (a schema states no such "
        "rule)",
    ("POST /api/v1/sessions/{token}/answers/", "invalid", "telemetry: "):
        "the telemetry block's fields are checked by annotation/services/telemetry.py (docs/annotator-api.md); "
        "the schema leaves it free-form",
    ("POST /api/v1/studies/{slug}/writing-signals/", "not_a_rewrite_study", "not rewrites"):
        f"{STATE}: only a rewrite study has writing signals",
    ("GET /api/v1/studies/{slug}/writing-signals/", "not_a_rewrite_study", "not rewrites"):
        f"{STATE}: only a rewrite study has writing signals",
    ("POST /api/v1/studies/{slug}/writing-signals/", "path_not_allowed", "outside the data folders"):
        "a server-side model directory (embedding_model) must lie in the folders the server's configuration names "
        "(STYLECROWD_DATA_DIRS)",
    ("POST /api/v1/studies/{slug}/writing-signals/", "invalid_base_url", "is not an http(s) URL"):
        "an OpenAI-compatible endpoint is an http(s) URL with a host (its description says so; a string pattern "
        "would not say which hosts answer)",
    ("POST /api/v1/studies/{slug}/writing-signals/", "url_not_allowed", "this server does not connect to"):
        "an endpoint must be one the server's MODEL_ALLOWED_URLS allows (core/outbound.py), which no schema can say",
    ("POST /api/v1/model-runs/", "url_not_allowed", "this server does not connect to"):
        "an endpoint must be one the server's MODEL_ALLOWED_URLS allows (core/outbound.py), which no schema can say",
    ("POST /api/v1/studies/{slug}/writing-signals/", "invalid", "needs an embedding model"):
        "two fields together: near_duplicate_method 'embedding' needs embedding_model (a schema states no such rule)",
    ("POST /api/v1/exports/", "unknown_component", "does not exist"):
        "a component is a name the database holds (style components are data, not an enum of the schema)",
    ("POST /api/v1/studies/{slug}/writing-signals/", "invalid", "is not a local model directory"):
        "a language model is a model directory on the server (with its config.json), which only the server's disk "
        "can tell",
    ("GET /api/v1/studies/{slug}/reviews/", "not_a_rewrite_study", "not rewrites"):
        f"{STATE}: only a rewrite study has a review queue",
    ("POST /api/v1/studies/{slug}/reviews/", "not_a_rewrite_study", "not rewrites"):
        f"{STATE}: only a rewrite study's rewrites are reviewed",
}
# The one body guard (core/json_guard.py) on any operation ("*"): rules about free-form JSON, where the schema has no
# field to state them on (a text field's own pattern already refuses NUL: these are keys and free-form values).
GUARD = "the body guard of every door (core/json_guard.py)"
ALLOWED.update({
    ("*", "invalid", "a key must not hold a NUL character"):
        f"{GUARD}: PostgreSQL's jsonb stores no NUL, and an object's keys (undeclared properties, free-form objects) "
        "have no schema of their own to say so",
    ("*", "invalid", "text must not hold a NUL character"):
        f"{GUARD}: a NUL inside a free-form JSON value (a declared text field's pattern says it already)",
    ("*", "invalid", "a whole number beyond"):
        f"{GUARD}: no column stores a whole number beyond 64 bits, and a free-form JSON value's numbers have no "
        "schema to bound them",
})
ALLOWED_CHECKS = {"positive_data_acceptance"}  # only refusals are explained; anything else must not fail at all


def _seed(admin_user) -> None:  # noqa: ANN001
    """A corpus with instances and two studies, so that operations reach past their 404s."""
    admin_user.set_password(PASSWORD)
    admin_user.save()
    quiet = {"stdout": open(os.devnull, "w"), "stderr": open(os.devnull, "w")}  # noqa: SIM115
    call_command("create_roles", **quiet)  # the view-only role's run signs in as a member of `viewer`
    viewer = User.objects.create_user(VIEWER, password=PASSWORD, is_staff=True)
    viewer.groups.add(Group.objects.get(name="viewer"))
    corpora = REPO / "fixtures/corpora"
    call_command("import_corpus", str(corpora / "formality_informal.txt"), str(corpora / "formality_formal.txt"),
                 "--name", "formality-demo", "--component", "formality", "--format", "aligned",
                 "--licence", "GPL-3.0-or-later", "--attribution", "StyleCrowd's authors", **quiet)
    call_command("generate_instances", "--corpus", "formality-demo", "--setup", "quadruple", "--seed", "1", **quiet)
    call_command("create_study", "--slug", "demo", "--setup", "quadruple", "--corpus", "formality-demo",
                 "--count", "6", "--annotators-per-item", "3", "--items-per-batch", "3", "--screening-per-batch", "0",
                 **quiet)
    # A reviewed rewrite study, so that its review queue and writing signals answer more than "not rewrites".
    call_command("create_study", "--slug", "demo-rw", "--kind", "rewrite", "--sources-corpus", "formality-demo",
                 "--side", "1", "--target-style", "formal", "--annotators-per-item", "2", "--items-per-batch", "3",
                 "--eligibility", "none", **quiet)


def _run(url: str, report: Path, *extra: str, max_examples: int) -> dict:
    # The schema is served to staff only: read once with the superuser's credentials, then every run (the anonymous
    # one too) loads it from a file and sends its cases to the server.
    schema = report / "schema.json"
    answer = httpx.get(f"{url}/api/schema/", params={"format": "json"}, auth=(ADMIN, PASSWORD), timeout=60)
    answer.raise_for_status()
    schema.write_bytes(answer.content)
    command = [str(ST), "--config-file", str(CONFIG), "run", str(schema), "--url", url, "--checks", "all",
               "--max-examples", str(max_examples),
               # one worker: with the seed fixed, the same schema and the same seeded database, a run sends the same
               # cases every time, so a refusal is met (and explained) once, not by chance on some machine
               "--seed", "1", "--workers", "1", "--report", "json,ndjson", "--report-dir", str(report),
               "--no-color", *extra]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=report)
    summary = json.loads(next(report.glob("json-*.json")).read_text())
    summary["output"] = completed.stdout[-4000:] + completed.stderr[-2000:]
    summary["failed_checks"] = list(_failed_checks(next(report.glob("ndjson-*.ndjson"))))
    return summary


def _failed_checks(ndjson: Path):
    """(operation, check, error code, error message, request, status) of every failed check in schemathesis'
    event stream; the stateful phase's failures under the operation that failed."""
    for line in ndjson.read_text().splitlines():
        event = json.loads(line).get("ScenarioFinished")
        if not event:
            continue
        recorder = event["recorder"]
        for case_id, checks in recorder.get("checks", {}).items():
            for check in checks:
                if check["status"] != "failure":
                    continue
                case = (recorder.get("cases", {}).get(case_id) or {}).get("value") or {}
                operation = f"{case['method']} {case['path']}" if case else recorder["label"]
                interaction = recorder.get("interactions", {}).get(case_id) or {}
                response = interaction.get("response") or {}
                error = _error_of(response)
                request = interaction.get("request") or {}
                yield (operation, check["name"], error.get("code", ""), error.get("message", ""),
                       f"{request.get('method')} {request.get('uri')}", response.get("status_code"))


def _error_of(response: dict) -> dict:
    body = (response.get("content") or {}).get("$base64")
    try:
        error = json.loads(base64.b64decode(body)).get("error") if body else None
    except (ValueError, AttributeError):
        error = None
    return error if isinstance(error, dict) else {}


def _reason(failure: tuple) -> str | None:
    operation, check, code, message = failure[:4]
    if check not in ALLOWED_CHECKS:
        return None
    return next((reason for (op, c, fragment), reason in ALLOWED.items()
                 if op in (operation, "*") and c == code and fragment in message), None)


def _unexplained(summary: dict) -> list[tuple]:
    return [failure for failure in summary["failed_checks"] if _reason(failure) is None]


@pytest.fixture
def schema_server(transactional_db, admin_user, tmp_path):  # noqa: ANN001
    """gunicorn as the README runs it (two workers) on the test database: Django's threaded live server would
    double the run's time on two cores."""
    from django.core.cache import cache

    cache.clear()  # counters other tests left (rate limits, sign-in failures) would change what the run reaches
    _seed(admin_user)
    # The anonymous run and the ignored_auth check send wrong credentials on purpose: no lock-out here. Database
    # connections kept between requests, as the README runs production (DJANGO_CONN_MAX_AGE=600): with the default 0
    # each of the run's thousands of requests opened one, and PostgreSQL started a backend process for each (the run
    # took half as long again on the 2-core machine; docs/benchmarks.md, "Test suite time (issue 29)").
    env = {"DJANGO_LOGIN_FAILURE_LIMIT": "100000", "DJANGO_CONN_MAX_AGE": "600"}
    with gunicorn(settings_module="config.settings.test", env=env,
                  log=tmp_path / "gunicorn.log") as base:
        yield base


@pytest.mark.slow
@pytest.mark.django_db(transaction=True, reset_sequences=True)

def test_schemathesis_finds_no_server_error_and_no_mismatch(schema_server, admin_user, artifacts_dir):  # noqa: ANN001
    reports = artifacts_dir / "schemathesis"
    superuser = _run(schema_server, _folder(reports, "superuser"), "--auth", f"{admin_user.username}:{PASSWORD}",
                     max_examples=5)
    # Anonymous: every researcher operation must refuse, the participant flow must hold; without the coverage
    # phase (hundreds of boundary cases that a 403 answers before looking at them).
    anonymous = _run(schema_server, _folder(reports, "anonymous"), "--phases", "fuzzing,stateful", max_examples=3)
    # The view-only role: it reads everything and every write must refuse it (a 403, never a 5xx); fuzzing only, with
    # fewer examples (its writes stop at the permission, so the stateful phase's links lead nowhere new).
    viewer = _run(schema_server, _folder(reports, "viewer"), "--auth", f"{VIEWER}:{PASSWORD}",
                  "--phases", "fuzzing", max_examples=2)
    hostile = _hostile_phase(schema_server, (admin_user.username, PASSWORD))
    runs = (("superuser", superuser), ("anonymous", anonymous), ("viewer", viewer))
    figures: dict = {name: {"operations": run["operations"]["tested"], "cases": run["test_cases"]["generated"],
                            "seconds": round(run["running_time"], 1),
                            "explained": dict(Counter(f"{f[0]} {f[2]}: {_reason(f)}" for f in run["failed_checks"]
                                                      if _reason(f))),
                            "unexplained": [list(map(str, f)) for f in _unexplained(run)]}
                     for name, run in runs}
    figures["hostile"] = {key: value for key, value in hostile.items() if key != "wrong"}
    (reports / "figures.json").write_text(json.dumps(figures, indent=1))

    for _, run in runs:
        assert run["operations"]["tested"] == run["operations"]["selected"] >= 60, run["output"]
        assert run["operations"]["errored"] == 0 and run["test_cases"]["errored"] == 0, run["output"]
        assert not any(failure[1] == "not_a_server_error" for failure in run["failed_checks"]), run["output"]
    assert superuser["test_cases"]["generated"] >= 1000, superuser["output"]
    for _, run in runs:
        assert _unexplained(run) == [], run["output"]
    assert hostile["wrong"] == [], hostile["wrong"][:20]
    assert hostile["operations"] >= 25 and hostile["answered_400"] > hostile["probes"] // 2, hostile


def _hostile_phase(base: str, auth: tuple[str, str]) -> dict:
    """Every probe of tests/core/hostile_bodies.py sent as the superuser (so that a body is read, not refused at the
    door): a refused probe must answer a 4xx, a long string anything but a 5xx. Paths name the seeded studies, a
    participant session's token of `demo` and id 1."""
    http = requests.Session()
    schema = http.get(f"{base}/api/schema/?format=json", auth=auth, timeout=30).json()
    arrival = {"participant": "hostile-1", "platform": "prolific"}
    token = http.post(f"{base}/api/v1/studies/demo/sessions/", json=arrival, timeout=30).json()["token"]
    values = {"slug": "demo-rw", "token": token}
    started, wrong, statuses, operations = time.monotonic(), [], Counter(), set()
    for probe in probes(schema):
        path = probe.operation.split(" ", 1)[1]
        for name in re.findall(r"{(\w+)}", path):
            path = path.replace(f"{{{name}}}", values.get(name, "1"))
        operations.add(probe.operation)
        response = _send(http, probe, f"{base}{path}", auth)
        if response is None:  # twice no answer: a worker that died on the body, as wrong as a 500
            wrong.append((probe.operation, probe.what, "no answer", ""))
            http = requests.Session()
            continue
        statuses[response.status_code] += 1
        if not _answer_fits(probe, response.status_code):
            wrong.append((probe.operation, probe.what, response.status_code, response.text[:200]))
    return {"operations": len(operations), "probes": sum(statuses.values()), "answered_400": statuses[400],
            "statuses": {str(code): n for code, n in sorted(statuses.items())},
            "seconds": round(time.monotonic() - started, 1), "wrong": wrong}


def _send(http: requests.Session, probe: Probe, url: str, auth: tuple[str, str]) -> requests.Response | None:
    """The probe's answer; once more on a new connection when the kept-alive one was closed (a server that refused
    the previous body from its length, unread, closes the connection it came on)."""
    for session in (http, requests.Session()):
        try:
            return session.request(probe.operation.split(" ", 1)[0], url, data=probe.body, auth=auth,
                                   headers={"Content-Type": probe.content_type}, timeout=60)
        except requests.ConnectionError:
            continue
    return None


def _answer_fits(probe: Probe, status: int) -> bool:
    return 400 <= status < 500 if probe.refused else status < 500


def _folder(parent: Path, name: str) -> Path:
    folder = parent / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def test_every_error_answer_is_documented_with_the_one_error_body(api, anonymous_api):  # noqa: ANN001
    """The schema's error statuses point at `Error`, and the server's errors have that shape (a 400 from strict
    JSON types, a 400 from the checked pagination, a 403 for a stranger)."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for code, response in operation["responses"].items():
                if code.startswith(("4", "5")):
                    assert response["content"] == {"application/json": {"schema": {
                        "$ref": "#/components/schemas/Error"}}}, (method, path, code)
            if path.startswith("/api/v1/ping/"):
                continue
            assert "404" in operation["responses"] or "{" not in path, (method, path)
            if method == "post":
                assert {"400", "409"} <= set(operation["responses"]), (method, path)
            if "requestBody" in operation and "sessions" not in path and "hooks" not in path:
                assert "429" in operation["responses"], (method, path)

    error = assert_api_error(api.get("/api/v1/instances/?offset=abc"), code="invalid", status=400)
    assert "offset" in error["details"]
    error = assert_api_error(api.post("/api/v1/components/", {"name": 7, "label_1": "a", "label_2": "b"},
                                      format="json"), code="invalid", status=400)
    assert error["details"] == {"name": ["Must be text (a JSON string)."]}
    assert_api_error(anonymous_api.get("/api/v1/exports/"), code="not_authenticated", status=403)
