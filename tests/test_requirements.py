"""requirements.txt is generated from pyproject.toml + constraints.txt (scripts/requirements.py) and may not drift."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "requirements.py"


def _load_script():  # noqa: ANN202
    spec = importlib.util.spec_from_file_location("requirements_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


requirements = _load_script()


def test_requirements_txt_is_what_pyproject_and_constraints_generate():
    checked_in = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    assert checked_in == requirements.render(), "requirements.txt has drifted: run `make requirements`"
    pins = dict(line.split("==") for line in checked_in.splitlines() if line and not line.startswith("#"))
    # Every runtime dependency and the models group, pinned as the lock pins them; no test or dev tool.
    locked = dict(line.split("==") for line in (ROOT / "constraints.txt").read_text().splitlines()
                  if line and not line.startswith("#"))
    assert all(locked[name] == version for name, version in pins.items())
    for name in ("celery", "psycopg", "psycopg-binary", "redis", "gunicorn", "torch", "sentence-transformers",
                 "kombu", "numpy"):
        assert name in pins, name
    for name in ("pytest", "ruff", "playwright", "hypothesis", "pip", "setuptools"):
        assert name not in pins, name


def test_a_changed_pin_is_reported_as_drift(tmp_path):
    constraints = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    changed = tmp_path / "constraints.txt"
    changed.write_text(constraints.replace("\ncelery==", "\ncelery==5.4.0\n# was celery==", 1), encoding="utf-8")
    assert requirements.render(constraints=changed) != requirements.render()
    out = tmp_path / "requirements.txt"
    out.write_text(requirements.render(constraints=changed), encoding="utf-8")
    check = subprocess.run([sys.executable, str(SCRIPT), "--check", "--out", str(out)], capture_output=True,
                           text=True, cwd=ROOT)
    assert check.returncode == 1
    summary = json.loads(check.stdout.strip().splitlines()[-1])
    assert summary["ok"] is False and summary["drifted"] is True
    assert "-celery==5.4.0" in check.stderr and "make requirements" in check.stderr


def test_a_dependency_the_lock_does_not_pin_or_pins_outside_its_range_is_an_error(tmp_path):
    constraints = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    unpinned = tmp_path / "unpinned.txt"
    unpinned.write_text("\n".join(line for line in constraints.splitlines() if not line.startswith("kombu==")),
                        encoding="utf-8")
    with pytest.raises(requirements.DriftError, match="kombu .*not pinned in constraints.txt"):
        requirements.render(constraints=unpinned)
    outside = tmp_path / "outside.txt"
    outside.write_text("\n".join("Django==4.2.0" if line.startswith("Django==") else line
                                 for line in constraints.splitlines()), encoding="utf-8")
    with pytest.raises(requirements.DriftError, match=r"pins Django==4.2.0, outside the declared range (?i:django)"):
        requirements.render(constraints=outside)
