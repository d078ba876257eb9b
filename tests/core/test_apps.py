"""Django's set-up stays light: every process (a management command, a Celery worker, a test run) pays for what
`django.setup()` imports, and the admin's autodiscovery imports every app's admin modules. The libraries that only
some computations need (pandas and pyarrow for exports and agreement, scipy, krippendorff, sacrebleu) load inside
those computations (`# heavy:` imports, `scoring/admin/__init__.py`), and `score_stel`'s path (the command and the
service, scoring a STEL TSV) loads none of pandas, pyarrow or scipy. Each check runs in a fresh interpreter, where
nothing has been imported yet; benchmarks/startup.py times the set-up."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings

HEAVY = ("pandas", "pyarrow", "scipy", "krippendorff", "sacrebleu")
SCORE_STEL_HEAVY = ("pandas", "pyarrow", "scipy")


def _loaded_after(code: str, watched: tuple[str, ...], settings_module: str) -> list[str]:
    script = (
        "import json, sys\n"
        "import django\n"
        "django.setup()\n"
        f"{code}\n"
        f"print(json.dumps(sorted(m for m in {watched!r} if m in sys.modules)))\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": settings_module}
    done = subprocess.run([sys.executable, "-c", script], cwd=settings.BASE_DIR, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("settings_module", ["config.settings.test", "config.settings.local"])
def test_django_setup_imports_none_of_the_heavy_libraries(settings_module):
    assert _loaded_after("", HEAVY, settings_module) == []


def test_score_stel_path_imports_neither_pandas_nor_pyarrow_nor_scipy():
    code = ("import scoring.management.commands.score_stel  # noqa\n"
            "from scoring.model_scoring.services import stel_score  # noqa")
    assert _loaded_after(code, SCORE_STEL_HEAVY, "config.settings.test") == []


def test_the_check_sees_a_heavy_import():
    # The same check, with a module that does import pandas: it must be reported, or the checks above prove nothing.
    loaded = _loaded_after("import scoring.export.formats  # noqa", HEAVY, "config.settings.test")
    assert {"pandas", "pyarrow"} <= set(loaded)
