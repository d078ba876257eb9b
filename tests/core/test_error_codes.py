"""Error codes: declared once per app, raised by name, documented in docs/errors.md from the declarations.

The scans read the source with `ast` (core/error_catalogue.py); a failure names the file and line to fix."""
from __future__ import annotations

import ast
import importlib
import importlib.util
import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from core import error_catalogue
from core.error_codes import INVALID, NOT_FOUND, ErrorCodes
from core.errors import ApplicationError

ROOT = error_catalogue.ROOT

# Every code the source gave before the codes had names (the literals of commit d32b6f2, as this scan finds them):
# the declarations must hold exactly these, plus DRF's own codes and the check's own, so no client sees a new or a
# renamed code.
CODES_BEFORE = set("""
account_fixed aligned_files_by_role already_participated answer_conflict bad_device bad_encoding bad_item bad_model
bad_model_path bad_option bad_request bad_rows base_url_missing blocked bonus_cap_exceeded busy cannot_write
component_exists component_mismatch confirmation_required conflict corpus_exists correct_mismatch draft_exists
duplicate_id duplicate_output duplicate_response empty_allow_list empty_choice empty_corpus empty_file empty_id
empty_text encryption_key_invalid encryption_key_missing error exists expired export_changed file_missing
file_not_found finished https_required hub_error hub_outcome_unknown hub_rate_limited hub_unauthorized
hub_unreachable instances_exist instances_in_use invalid invalid_arguments invalid_base_url invalid_component
invalid_count invalid_decision invalid_device invalid_encoding invalid_error_type invalid_file invalid_format
invalid_hub invalid_json invalid_kind invalid_language invalid_level invalid_link invalid_model_dir invalid_name
invalid_option invalid_out invalid_practice invalid_preset invalid_question invalid_references invalid_repo
invalid_resamples invalid_rule invalid_scale invalid_setup invalid_side invalid_split_by invalid_splits
invalid_status invalid_stop_after invalid_token_env invalid_value leak_detected length_required
licence_not_recorded login_locked malformed_row message_too_long message_too_short method missing_columns
missing_component missing_dependency missing_field missing_model missing_model_dir missing_model_path missing_rate
missing_rewrite_model_url missing_study missing_token mixed_components model_endpoint_auth model_endpoint_error
model_endpoint_rate_limited model_endpoint_timeout model_endpoint_unreachable model_not_found model_not_loadable
model_reply_malformed model_request_refused no_account no_cuda no_draft no_files no_instances no_items no_metrics
no_pairs no_ratings no_recipients no_responses no_rewrites no_work_available not_a_file not_a_hub_export
not_a_ranking_study not_a_rewrite_study not_adaptive not_causal_lm not_computed not_found not_likert
not_on_platform not_published not_qualified not_redistributable not_reserved nothing_accepted nothing_to_aggregate
nothing_to_export nothing_to_filter nothing_to_store path_not_allowed path_too_long permission_denied
platform_bad_link platform_bad_pagination platform_error platform_forbidden platform_mismatch platform_no_answer
platform_not_found platform_rate_limited platform_refused platform_server_error platform_unauthorized
platform_unreachable pos_unavailable question_required rebuild_mismatch reward_below_minimum scale_mismatch
screened_out secret_undecryptable seed_required server_error session_in_progress signals_not_computed study_busy
study_kind_mismatch study_not_imported study_not_open token_missing too_few_outputs too_few_pairs too_large
too_many_outputs unchanged unequal_line_counts unknown_backend unknown_component unknown_corpus unknown_file_type
unknown_format unknown_item unknown_licence unknown_method unknown_metric unknown_normalizer unknown_outcome
unknown_plot unknown_question unknown_setup unknown_study unknown_target_style unsupported_kind untranslated
upload_too_large url_not_allowed webhook_refused workspace_missing wrong_file_count wrong_file_field wrong_state
""".split())
DRF_CODES = {"authentication_failed", "method_not_allowed", "not_acceptable", "not_authenticated", "parse_error",
             "throttled", "unsupported_media_type"}
NEW_CODES = {
    "error_codes_stale",  # manage.py error_codes --check, a developer's command
    "nothing_to_erase", "erased_person",  # erasure on request: an id with no data; an import of an erased person
    "special_category_consent_missing",  # studies asking special-category questions
    "persona_from_platform_unavailable",  # persona read from the platform: a Prolific study, attributes it records
    "salt_missing",  # a salted benchmark export job re-run after its release salt was dropped from the job row
    "item_text_mismatch", "not_numeric_scale",  # ratings imported with their texts (import_annotations --items/--wide)
    "unsupported_language", "llm_rater_failed",  # metrics refused on another language; the LLM autorater's endpoint
    "line_too_long",  # an uploaded or imported line longer than STYLECROWD_MAX_LINE_BYTES
    "too_many_open_from_address",  # batches of a study open at once from one client address
    "no_test_run",  # the pre-flight's test participant run, on a platform that has none (MTurk, the mock)
    "nul_in_text",  # a text file (corpus, rewrite sources) holding a NUL character, which no stored text may hold
    "no_screening_in_language",  # a study with too few screening questions in its language (issue 33)
    "ethnicity_categories_required",  # a persona ethnicity question without categories fitting the study
}


@pytest.fixture(scope="module")
def sites() -> list[error_catalogue.Site]:
    return error_catalogue.scan()


def _codemod():
    spec = importlib.util.spec_from_file_location("codemod_error_codes", ROOT / "scripts" / "codemod_error_codes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_declared_codes_are_the_codes_of_before_plus_drfs_own() -> None:
    declared = set(error_catalogue.declarations())
    assert len(CODES_BEFORE) == 210
    assert declared - CODES_BEFORE - DRF_CODES - NEW_CODES == set(), "a code no client has seen before"
    assert CODES_BEFORE - declared == set(), "a code of before is no longer declared"


def test_each_constant_is_its_wire_string_named_in_upper_case() -> None:
    declared = error_catalogue.declarations()
    for module_name in error_catalogue.MODULES:
        module = importlib.import_module(module_name)
        mine = [c for c in declared.values() if c.module == module_name]
        assert mine, module_name
        for code in mine:
            constant = getattr(module, code.value.upper())
            assert type(constant) is str and constant == code.value, (module_name, code.value)
            assert code.meaning and "\n" not in code.meaning, (module_name, code.value)


def test_a_code_is_declared_in_the_lowest_app_that_raises_it(sites: list[error_catalogue.Site]) -> None:
    declared = error_catalogue.declarations()
    apps = {}
    for site in sites:
        if site.value in declared:
            apps.setdefault(site.value, set()).add(site.path.parts[0])
    wrong = {}
    for value, used_in in apps.items():
        lowest = min((a for a in used_in if a in error_catalogue.APPS), key=error_catalogue.APPS.index)
        home = declared[value].module.split(".")[0]
        if error_catalogue.APPS.index(home) > error_catalogue.APPS.index(lowest):
            wrong[value] = (declared[value].module, sorted(used_in))
    assert wrong == {}, "declared above an app that raises it (the lower app cannot import it)"


def test_no_error_code_is_a_string_literal_in_the_source(sites: list[error_catalogue.Site]) -> None:
    left = [f"{s.where()} {s.value!r}" for s in error_catalogue.literal_sites(sites)]
    assert left == [], (f"{len(left)} error code(s) spelled as string literals; run "
                        f"python scripts/codemod_error_codes.py (declare a new code in its app's error_codes.py "
                        f"first): " + "; ".join(left[:30]))


def test_every_code_the_source_gives_is_declared(sites: list[error_catalogue.Site]) -> None:
    assert [f"{s.where()} {s.value!r}" for s in error_catalogue.undeclared(sites)] == []


def test_every_declared_code_is_raised_somewhere(sites: list[error_catalogue.Site]) -> None:
    raised = {s.value for s in sites if s.context != "compare"}
    idle = [c.value for c in error_catalogue.declarations().values() if c.value not in raised and not c.source]
    assert idle == [], "declared but never raised: remove the declaration, or raise it"


def test_drfs_codes_are_drfs(sites: list[error_catalogue.Site]) -> None:
    drf = error_catalogue.drf_statuses()
    ours = {c.value for c in error_catalogue.declarations().values() if c.source == "DRF"}
    assert ours - set(drf) == set()
    assert drf["not_found"] == 404 and drf["parse_error"] == 400 and drf["throttled"] == 429


def test_docs_errors_md_is_the_generated_table(sites: list[error_catalogue.Site]) -> None:
    text = (ROOT / error_catalogue.DOCS).read_text(encoding="utf-8")
    block = error_catalogue.docs_block(text)
    assert block is not None, "docs/errors.md lost its markers"
    assert block == error_catalogue.markdown(sites), "docs/errors.md is stale: run python manage.py error_codes --write"
    for code in error_catalogue.declarations():
        assert f"| `{code}` |" in block


def test_the_participant_error_table_names_declared_codes_with_their_statuses(
        sites: list[error_catalogue.Site]) -> None:
    """docs/annotator-api.md's hand-written table (the participant endpoints' cases) uses declared codes, each with
    a status the code is answered with."""
    text = (ROOT / "docs" / "annotator-api.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d{3}) \| `([a-z_]+)` \|", text, flags=re.MULTILINE)
    assert len(rows) >= 20
    statuses = {r["code"]: r["status"] for r in error_catalogue.table_rows(sites)}
    for status, code in rows:
        assert code in statuses, f"docs/annotator-api.md documents {code!r}, which no app declares"
        assert status in statuses[code].split(", "), (code, status, statuses[code])


def test_codes_the_tests_expect_are_declared() -> None:
    """Tests keep the wire strings (they check what a client sees); each must be a declared code."""
    declared = error_catalogue.declarations()
    expected = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and error_catalogue._func_name(node.func) == "assert_api_error":
                for kw in node.keywords:
                    if kw.arg == "code" and isinstance(kw.value, ast.Constant):
                        expected.setdefault(kw.value.value, f"{path.relative_to(ROOT)}:{node.lineno}")
    assert len(expected) >= 30
    assert {code: where for code, where in expected.items() if code not in declared} == {}


def test_a_constant_goes_on_the_wire_as_the_plain_string() -> None:
    error = ApplicationError("Study: no study with slug 'x'.", code=NOT_FOUND, status=404)
    assert json.loads(json.dumps(error.as_dict())) == {"code": "not_found", "message": "Study: no study with slug 'x'."}
    assert ApplicationError("bad").code == INVALID == "invalid"


def test_declaring_a_code_twice_or_badly_is_refused() -> None:
    codes = ErrorCodes("tests.elsewhere")
    with pytest.raises(ValueError, match="declared already in core.error_codes"):
        codes.declare("not_found", "again")
    with pytest.raises(ValueError, match="lower_snake_case"):
        codes.declare("Not-Found", "bad")
    with pytest.raises(ValueError, match="one-line meaning"):
        codes.declare("fresh_code_for_this_test", " ")


def test_the_command_checks_and_prints_a_json_summary() -> None:
    out = io.StringIO()
    call_command("error_codes", "--markdown", stdout=out)
    lines = out.getvalue().strip().splitlines()
    assert lines[0] == error_catalogue.BEGIN
    summary = json.loads(lines[-1])
    assert summary["ok"] is True and summary["codes"] == len(error_catalogue.declarations())
    assert summary["docs_current"] is True


def test_the_command_refuses_a_stale_docs_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "errors.md"
    stale.write_text(f"# Error codes\n\n{error_catalogue.BEGIN}\n| `gone` | 400 | core | old |\n"
                     f"{error_catalogue.END}\n")
    monkeypatch.setattr(error_catalogue, "DOCS", stale)
    out = io.StringIO()
    with pytest.raises(CommandError, match="is stale"):
        call_command("error_codes", "--check", stdout=out)
    error = json.loads(out.getvalue().strip().splitlines()[-1])["error"]
    assert error["code"] == "error_codes_stale"
    call_command("error_codes", "--write", stdout=io.StringIO())
    written = stale.read_text()
    assert written.startswith("# Error codes\n\n") and "`gone`" not in written and "| `study_busy` |" in written


DEMO = '''"""A service."""
from core.errors import ApplicationError
from tasks.models import Corpus

UNKNOWN_SETUP = "a name the file uses for something else"


class DemoError(ApplicationError):
    def __init__(self, message, *, code="invalid_count", status=409):
        super().__init__(message, code=code, status=status)


def corpus_find(name):
    if not name:
        raise ApplicationError("Name: café – empty", code="invalid_name", field="name")
    if name == "x":
        raise DemoError("x", code="unknown_setup")
    if name == "gone":
        raise ApplicationError("Corpus: gone", code="not_found", status=404)
    return Corpus
'''


def test_the_codemod_replaces_literals_by_constants_once(tmp_path: Path) -> None:
    codemod = _codemod()
    (tmp_path / "tasks" / "services").mkdir(parents=True)
    demo = tmp_path / "tasks" / "services" / "demo.py"
    demo.write_text(DEMO, encoding="utf-8")
    sites = error_catalogue.scan(tmp_path, ("tasks",))
    assert [(s.line, s.value, s.status, s.context) for s in sites] == [
        (9, "invalid_count", 409, "default"), (15, "invalid_name", 400, "call"), (17, "unknown_setup", 409, "call"),
        (19, "not_found", 404, "call")]

    summary = codemod.codemod(root=tmp_path, dirs=("tasks",))
    assert summary["ok"] and summary["replaced"] == 4 and summary["files"] == 1, summary
    text = demo.read_text(encoding="utf-8")
    assert 'code=INVALID_NAME, field="name")' in text and "café – empty" in text
    assert 'code=UNKNOWN_SETUP_CODE)' in text and 'UNKNOWN_SETUP = "a name the file uses for something else"' in text
    assert "from tasks.error_codes import UNKNOWN_SETUP as UNKNOWN_SETUP_CODE" in text
    assert "from tasks.error_codes import INVALID_COUNT, INVALID_NAME" in text
    assert "from core.error_codes import NOT_FOUND" in text and "code=NOT_FOUND, status=404" in text
    assert 'code="' not in text
    namespace: dict = {}
    exec(compile(text, str(demo), "exec"), namespace)  # noqa: S102 - the rewritten file still runs
    with pytest.raises(ApplicationError) as raised:
        namespace["corpus_find"]("x")
    assert raised.value.code == "unknown_setup" and raised.value.status == 409

    again = codemod.codemod(root=tmp_path, dirs=("tasks",))
    assert again["replaced"] == 0 and again["files"] == 0 and demo.read_text(encoding="utf-8") == text
    after = error_catalogue.scan(tmp_path, ("tasks",))
    assert [(s.line, s.value, s.literal) for s in after][-1][1:] == ("not_found", False)
    assert {s.value for s in after} == {s.value for s in sites}


def test_the_codemod_leaves_an_undeclared_or_misplaced_code_and_says_where(tmp_path: Path) -> None:
    """A code no app declares, and one declared above the file's app (tasks may not import annotation), stay."""
    codemod = _codemod()
    (tmp_path / "tasks").mkdir()
    path = tmp_path / "tasks" / "new.py"
    source = ('from core.errors import ApplicationError\n\n\ndef f(x):\n'
              '    if x:\n        raise ApplicationError("m", code="brand_new_code")\n'
              '    raise ApplicationError("m", code="expired", status=410)\n')
    path.write_text(source)
    summary = codemod.codemod(root=tmp_path, dirs=("tasks",))
    assert summary["ok"] is False and summary["replaced"] == 0
    assert summary["undeclared"] == ["tasks/new.py:6: 'brand_new_code'"]
    assert summary["misplaced"] == ["tasks/new.py:7: 'expired' is declared in annotation, above tasks"]
    assert path.read_text() == source


def test_a_second_scan_of_unchanged_files_gives_the_same_sites_and_a_changed_file_is_read_again(tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()
    path = tmp_path / "tasks" / "one.py"
    path.write_text('from core.errors import ApplicationError\n\n\ndef f():\n'
                    '    raise ApplicationError("m", code="invalid_count")\n')
    first = error_catalogue.scan(tmp_path, ("tasks",))
    assert [(s.line, s.value) for s in first] == [(5, "invalid_count")]
    assert error_catalogue.scan(tmp_path, ("tasks",)) == first
    path.write_text(path.read_text() + '\n\ndef g():\n    raise ApplicationError("m", code="not_found", status=404)\n')
    assert [(s.line, s.value) for s in error_catalogue.scan(tmp_path, ("tasks",))] == [(5, "invalid_count"),
                                                                                       (9, "not_found")]
