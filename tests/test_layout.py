"""One shape for every app: no suffix modules beside the ones they extend (`admin_review.py` beside `admin.py`: a
part of the admin becomes a module of an `admin/` package), and no module past about 400 lines (it splits where it
already has a seam). Reads the source tree only; no database."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = ("core", "tasks", "annotation", "platforms", "scoring")
SUFFIX_FILE = re.compile(r"^(models|admin|api)_\w+\.py$")
MAX_LINES = 400

def _modules(app: str) -> list[Path]:
    return sorted(p for p in (ROOT / app).rglob("*.py") if "migrations" not in p.relative_to(ROOT).parts)


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("app", APPS)
def test_an_app_has_no_suffix_modules(app: str) -> None:
    suffix_files = {_rel(p) for p in (ROOT / app).glob("*.py") if SUFFIX_FILE.match(p.name)}
    assert suffix_files == set(), "make these modules of a package (admin/, api/, models/)"


@pytest.mark.parametrize("app", APPS)
def test_no_module_of_an_app_is_longer_than_400_lines(app: str) -> None:
    lengths = {_rel(p): len(p.read_text(encoding="utf-8").splitlines()) for p in _modules(app)}
    long = {path: n for path, n in lengths.items() if n > MAX_LINES}
    assert long == {}, "split these modules where they already have a seam (a section marker, a group of functions)"


def test_the_checks_see_the_tree() -> None:
    """The walk finds the apps' modules (a wrong root would pass every check above vacuously)."""
    assert len(_modules("annotation")) > 20 and (ROOT / "tasks" / "admin" / "__init__.py").exists()
