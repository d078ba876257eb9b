from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest
from _pytest.nodeid import NodeId  # pytest's id type (9.2), for XdistGroups below
from django.apps import apps as django_apps
from django.conf import settings
from django.db.backends.postgresql.operations import DatabaseOperations
from django.db.models.signals import post_migrate
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from rest_framework.test import APIClient

# Property tests judge results, not speed: on the 2-core CI machine running servers and workers beside them, one
# example can take longer than Hypothesis's 200 ms default, which it reports as a flaky failure.
hypothesis_settings.register_profile("stylecrowd", deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("stylecrowd")

SHARED_DATA = Path(settings.SHARED_DATA_DIR)
REPO_ROOT = Path(settings.BASE_DIR)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        raise RuntimeError(f"shared data not found at {SHARED_DATA}; set STYLECROWD_SHARED_DATA")
    return SHARED_DATA


@pytest.fixture
def artifacts_dir() -> Path:
    path = REPO_ROOT / "test-artifacts"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture
def api(admin_user) -> APIClient:  # noqa: ANN001 (pytest-django's superuser fixture)
    """A DRF client signed in as a superuser (pytest-django's `admin_user`, who is also `admin_client`'s user)."""
    client = APIClient()
    client.force_authenticate(admin_user)
    return client


@pytest.fixture
def anonymous_api() -> APIClient:
    """A DRF client with no user: the participant's API, or a researcher endpoint refusing a stranger."""
    return APIClient()


# The fixtures of tests/annotation/conftest_browser.py: a test using any of them drives Chromium.
BROWSER_FIXTURES = frozenset({"browser", "context", "page", "phone_page"})
# Tiny models built with transformers, or the packaged MiniLM, as module fixtures of the model test files.
MODEL_FIXTURES = frozenset({"gpt2_dir", "nli_dir", "tiny_bert", "tiny_nsp", "tiny_model_dir"})


def _launches_chromium(item: pytest.Item) -> bool:
    """A live-server test that starts its own Playwright browser (not through the shared fixtures)."""
    function = getattr(item, "function", None)
    if function is None or "live_server" not in getattr(item, "fixturenames", ()):
        return False
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return False
    return "sync_playwright" in source or "chromium" in source


def _mark_lanes(item: pytest.Item) -> None:
    """`browser`, `model` and `slow` markers from what a test uses, so that `make test-fast` (not worker, browser,
    model or slow) needs no marker to be remembered by hand. Explicit markers on a test or module still count."""
    fixtures = set(getattr(item, "fixturenames", ()))
    if item.get_closest_marker("browser") is None and (fixtures & BROWSER_FIXTURES or _launches_chromium(item)):
        item.add_marker(pytest.mark.browser)
    if item.get_closest_marker("model") is None and fixtures & MODEL_FIXTURES:
        item.add_marker(pytest.mark.model)
    if item.get_closest_marker("slow") is None and "live_server" in fixtures:
        # A real HTTP server in a thread (or gunicorn beside it) and a flushed database after every test.
        item.add_marker(pytest.mark.slow)


def _restore_migration_rows(sender: Any, apps: Any = None, using: str = "default", **kwargs: Any) -> None:
    """The rows data migrations create (the STEL components), written again after every transactional test.

    A transactional test ends with a flush of every table, and the flush sends post_migrate, on which Django itself
    re-creates content types and permissions. The STEL components come from a data migration, so they are
    re-created here from that migration's own function: cheaper than a serialized rollback, which saves the whole
    database's rows one by one before every such test. Idempotent, so the real migrate's post_migrate changes nothing.
    """
    STEL_COMPONENTS_MIGRATION.create_components(apps or django_apps, None)


STEL_COMPONENTS_MIGRATION = importlib.import_module("tasks.migrations.0002_stel_components")
post_migrate.connect(_restore_migration_rows, sender=django_apps.get_app_config("tasks"),
                     dispatch_uid="tests.restore_migration_rows", weak=False)


# Every foreign key among the tables of the current schema: (referencing table, referenced table).
FOREIGN_KEYS_SQL = """
    SELECT child.relname, parent.relname
    FROM pg_constraint fk
    JOIN pg_class child ON child.oid = fk.conrelid
    JOIN pg_class parent ON parent.oid = fk.confrelid
    WHERE fk.contype = 'f' AND pg_table_is_visible(child.oid) AND pg_table_is_visible(parent.oid)
"""


def _children_first(tables: list[str], foreign_keys: list[tuple[str, str]]) -> list[str]:
    """`tables` with every referencing table before the tables it references. A table's reference to itself imposes
    no order; a cycle is broken at the table the fewest others still reference (the flush defers its constraints, so
    each is checked only at its end)."""
    referenced_by: dict[str, set[str]] = {table: set() for table in tables}
    for child, parent in foreign_keys:
        if child != parent and child in referenced_by and parent in referenced_by:
            referenced_by[parent].add(child)
    ordered: list[str] = []
    left = sorted(tables)
    while left:
        still = set(left)
        ready = ([table for table in left if not referenced_by[table] & still]
                 or [min(left, key=lambda table: len(referenced_by[table] & still))])  # a cycle
        ordered.extend(ready)
        left = [table for table in left if table not in ready]
    return ordered


def _delete_flush_sql(ops: DatabaseOperations, style: Any, tables: list[str], *, reset_sequences: bool = False,
                      allow_cascade: bool = False) -> list[str]:
    """The flush after a transactional test as DELETEs, children first, instead of Django's one TRUNCATE.

    TRUNCATE gives every table (and every index of each) a new file and waits on the disk: 0.2-0.3 s for the ~60
    tables on a quiet machine, seconds on a loaded one, even when a test wrote a handful of rows; DELETE on tables
    that are (nearly) empty costs next to nothing (benchmarks/flush_cost.py). The statements run in
    one transaction (`execute_sql_flush`) with the constraints deferred, so the order only matters for a constraint
    that cannot be deferred. With `reset_sequences` (a test's `reset_sequences=True`) the tables' sequences start at 1
    again, as TRUNCATE's RESTART IDENTITY would. A flush that must cascade to tables outside `tables` (`available_apps`)
    keeps Django's TRUNCATE ... CASCADE."""
    if not tables or allow_cascade:
        return ORIGINAL_SQL_FLUSH(ops, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
    with ops.connection.cursor() as cursor:
        cursor.execute(FOREIGN_KEYS_SQL)
        foreign_keys = cursor.fetchall()
        sequences = ([s for table in tables for s in ops.connection.introspection.get_sequences(cursor, table)]
                     if reset_sequences else [])
    statements = ["SET CONSTRAINTS ALL DEFERRED;"]
    statements += [f"DELETE FROM {ops.quote_name(table)};" for table in _children_first(list(tables), foreign_keys)]
    statements += ops.sequence_reset_by_name_sql(style, sequences)
    return statements


# Only the test process flushes with DELETE; the servers and Celery workers a test starts never flush.
ORIGINAL_SQL_FLUSH = DatabaseOperations.sql_flush
DatabaseOperations.sql_flush = _delete_flush_sql  # type: ignore[method-assign,assignment]


def _slowest_modules() -> list[str]:
    """tests/slowest_modules.txt: the test modules that take longest, slowest first (a path a line, `#` comments)."""
    lines = (Path(__file__).parent / "slowest_modules.txt").read_text(encoding="utf-8").splitlines()
    return [path for path in (line.split("#", 1)[0].strip() for line in lines) if path]


def _slowest_first(items: list[pytest.Item]) -> None:
    """The slowest modules' tests first, in the file's order; every other test after them, in collection order.

    xdist (`--dist loadgroup`: one test, or one `xdist_group`, at a time to whichever process is free) then starts the
    long tests while the other process still has many short ones to take, instead of one long module starting last
    on one process while the other one idles. The order is the same in every process, as xdist requires, and a group
    stays whole (xdist gathers a group's tests wherever they stand)."""
    rank = {path: index for index, path in enumerate(_slowest_modules())}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable


class XdistGroups:
    """`--dist loadgroup` keeps an `xdist_group`'s tests in one process again under pytest 9.2.

    xdist (3.8) tells its scheduler a test's group by appending `@group` to the test's id in each process, writing
    `item._nodeid`; pytest 9.2 builds the id from `item._id` instead, so the suffix is lost and every test is handed
    out on its own (pytest-xdist issue #1386, fix pending in #1388). This writes the suffix where pytest 9.2 reads it,
    after xdist's own hook, only where the id does not already carry it: a no-op once xdist is fixed."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        if not getattr(config.option, "loadgroup", False):  # set in xdist's worker processes for --dist loadgroup
            return
        for item in items:
            groups = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                             for m in item.iter_markers("xdist_group")})
            suffix = f"@{'_'.join(groups)}"
            if groups and hasattr(item, "_id") and not item.nodeid.endswith(suffix):
                item._id = NodeId.parse(f"{item.nodeid}{suffix}")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(XdistGroups(), "stylecrowd-xdist-groups")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Lane markers (see `_mark_lanes`); transactional tests without serialized rollback (see
    `_restore_migration_rows`), even where a module still asks for one; the slowest modules first (`_slowest_first`)."""
    _slowest_first(items)
    for item in items:
        _mark_lanes(item)
        marker = item.get_closest_marker("django_db")
        if marker is not None and marker.kwargs.get("serialized_rollback"):
            kwargs = {**marker.kwargs, "serialized_rollback": False}
            item.add_marker(pytest.mark.django_db(*marker.args, **kwargs), append=False)
