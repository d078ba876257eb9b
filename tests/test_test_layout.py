"""Tests mirror the code: every services module has a test module at the mirrored path.

A services module is each module inside an app's `services` package (recursively), and each `services.py` of a
scoring feature package. Its tests live at `tests/<app>/<path>/test_<module>.py` (for `scoring/<feature>/services.py`:
`tests/scoring/<feature>/test_services.py`). The list is read from the file system, so a new services module without
tests fails here."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APPS = ("core", "tasks", "annotation", "platforms", "scoring")


def services_modules() -> list[Path]:
    found: set[Path] = set()
    for app in APPS:
        for package in (ROOT / app).rglob("services"):
            if package.is_dir() and (package / "__init__.py").exists():
                found.update(p for p in package.rglob("*.py") if p.name != "__init__.py")
    found.update((ROOT / "scoring").glob("*/services.py"))
    return sorted(p.relative_to(ROOT) for p in found if "migrations" not in p.parts)


def mirrored_test(module: Path) -> Path:
    return Path("tests") / module.parent / f"test_{module.stem}.py"


def test_the_services_modules_are_found():
    modules = {m.as_posix() for m in services_modules()}
    assert "annotation/services/sessions.py" in modules
    assert "annotation/services/writing_signals/measures.py" in modules
    assert "scoring/agreement/filtering.py" not in modules
    assert "scoring/export/services.py" in modules
    assert mirrored_test(Path("scoring/export/services.py")) == Path("tests/scoring/export/test_services.py")


@pytest.mark.parametrize("module", services_modules(), ids=lambda m: m.as_posix())
def test_every_services_module_has_a_mirrored_test_module(module: Path):
    test_module = mirrored_test(module)
    assert (ROOT / test_module).is_file(), f"{module} has no tests at {test_module}"
    # pytest imports test modules as packages by their path: every folder up to tests/ needs an __init__.py.
    for folder in test_module.parents:
        if folder == Path("."):
            break
        assert (ROOT / folder / "__init__.py").is_file(), f"{folder} needs an __init__.py"
