"""What one transactional test's teardown flush costs: Django's TRUNCATE of every table against the DELETE-based flush
of tests/conftest.py (`_delete_flush_sql`), each followed by the post_migrate that re-creates content types,
permissions and the STEL components, as `TransactionTestCase._fixture_teardown` runs it.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sc_main .venv/bin/python benchmarks/flush_cost.py --rounds 5
    ... benchmarks/flush_cost.py --rounds 5 --synchronous-commit on    # as before config/settings/test.py set it off

It uses the test database pytest's --reuse-db uses (test_<name>, created and migrated if missing, kept afterwards).
Before each flush a few rows are written (a user and a group), as a short test would.
The two flushes alternate within each round, so a change of load falls on both. The last line is a JSON summary.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import Group, User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.core.management.color import no_style  # noqa: E402
from django.core.management.sql import emit_post_migrate_signal, sql_flush  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.backends.postgresql.operations import DatabaseOperations  # noqa: E402
from django.test.utils import setup_databases  # noqa: E402

from tests.conftest import ORIGINAL_SQL_FLUSH, _delete_flush_sql  # noqa: E402

FLUSHES = {"truncate": ORIGINAL_SQL_FLUSH, "delete": _delete_flush_sql}


def one_flush(kind: str, index: int) -> tuple[float, float]:
    """Seconds for the SQL alone and for the whole flush command (SQL and post_migrate)."""
    DatabaseOperations.sql_flush = FLUSHES[kind]  # type: ignore[method-assign,assignment]
    User.objects.create_user(f"flush-{kind}-{index}", password="x")
    Group.objects.create(name=f"flush-{kind}-{index}")
    started = time.perf_counter()
    call_command("flush", verbosity=0, interactive=False, reset_sequences=False, allow_cascade=False,
                 inhibit_post_migrate=False)
    whole = time.perf_counter() - started
    User.objects.create_user(f"flush-{kind}-{index}-sql", password="x")
    started = time.perf_counter()
    connection.ops.execute_sql_flush(sql_flush(no_style(), connection, reset_sequences=False))
    sql_only = time.perf_counter() - started
    emit_post_migrate_signal(0, False, connection.alias)  # the rows the next round expects
    return sql_only, whole


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="rounds, each one flush of each kind (default 5)")
    parser.add_argument("--synchronous-commit", choices=["on", "off"], default="off",
                        help="the session's synchronous_commit (config/settings/test.py sets off; default off)")
    args = parser.parse_args()
    setup_databases(verbosity=0, interactive=False, keepdb=True)
    with connection.cursor() as cursor:
        cursor.execute(f"SET synchronous_commit = {args.synchronous_commit}")
        cursor.execute("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()")
        tables = cursor.fetchone()[0]
    results: dict[str, dict[str, list[float]]] = {kind: {"sql_s": [], "flush_s": []} for kind in FLUSHES}
    for index in range(args.rounds):
        for kind in FLUSHES:
            sql_only, whole = one_flush(kind, index)
            results[kind]["sql_s"].append(round(sql_only, 3))
            results[kind]["flush_s"].append(round(whole, 3))
            print(f"round {index + 1} {kind}: SQL {sql_only:.3f} s, flush with post_migrate {whole:.3f} s "
                  f"(load {os.getloadavg()[0]:.2f})", file=sys.stderr)
    DatabaseOperations.sql_flush = ORIGINAL_SQL_FLUSH  # type: ignore[method-assign]
    print(json.dumps({
        "ok": True, "tables": tables, "synchronous_commit": args.synchronous_commit,
        "database": connection.settings_dict["NAME"], "load": os.getloadavg()[0],
        **{kind: {"median_sql_s": statistics.median(r["sql_s"]), "median_flush_s": statistics.median(r["flush_s"]),
                  **r} for kind, r in results.items()},
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
