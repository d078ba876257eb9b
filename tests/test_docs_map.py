"""The map in the repository cannot drift silently: every module named in backticks in docs/architecture.md and in the
apps' READMEs exists, every app has a README, and every app's README names each of its top-level modules and packages.

A backticked name is checked when it looks like a path (`core/jobs.py`, `admin/`: in an app's README a path may be
relative to the app, in the architecture relative to any app) or a dotted name that starts with an app
(`annotation.services.engine`: a module, a name defined at a module's top level, or a Celery task's registered
name, `tasks.corpus_import`). Placeholders (`<part>`), URLs (`/api/v1/`) and code with spaces or calls are not
paths and are left alone. Reads the source tree only; no database."""
from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = ("core", "tasks", "annotation", "platforms", "scoring")
ARCHITECTURE = ROOT / "docs" / "architecture.md"
BACKTICKED = re.compile(r"`([^`\n]+)`")
PATH_LIKE = re.compile(r"^[\w.-]+(/[\w.-]+)*/?$")
DOTTED = re.compile(rf"^(?:{'|'.join(APPS)}|config)(\.\w+)+$")
# An app's README lists its modules and packages; `apps.py` (Django's boilerplate) and folders that are not Python
# packages (`static/`, `templates/`) may be left out.
UNLISTED = {"__init__.py", "apps.py"}


def _backticked(path: Path) -> list[str]:
    return BACKTICKED.findall(path.read_text(encoding="utf-8"))


def _is_path(token: str) -> bool:
    return PATH_LIKE.match(token) is not None and ("/" in token or token.endswith((".py", ".md", ".js", ".toml")))


@cache
def _registered_task_names() -> frozenset[str]:
    """`name=` of every `shared_task` in the apps' celery_tasks modules."""
    names: set[str] = set()
    for app in APPS:
        for path in [ROOT / app / "celery_tasks.py", *sorted((ROOT / app / "celery_tasks").glob("*.py"))]:
            if not path.exists():
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call):
                    names.update(k.value.value for k in node.keywords
                                 if k.arg == "name" and isinstance(k.value, ast.Constant))
    return frozenset(names)


def _top_level_names(module: Path) -> set[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def _dotted_exists(token: str) -> bool:
    """A module or package, a name defined (or re-exported) at a module's top level, or a registered task name."""
    if token in _registered_task_names():
        return True
    parts = token.split(".")
    for cut in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:cut])
        module = base.with_suffix(".py") if base.with_suffix(".py").exists() else base / "__init__.py"
        if not module.exists():
            continue
        rest = parts[cut:]
        return not rest or (len(rest) == 1 and rest[0] in _top_level_names(module))
    return False


def _missing(doc: Path, *, apps: tuple[str, ...] = ()) -> list[str]:
    """Names in `doc` that do not exist; a path may be relative to the root or to one of `apps`."""
    missing = []
    for token in _backticked(doc):
        if _is_path(token):
            candidates = [ROOT / token, *(ROOT / app / token for app in apps)]
            if not any(c.exists() for c in candidates):
                missing.append(token)
        elif DOTTED.match(token) and not _dotted_exists(token):
            missing.append(token)
    return missing


def test_every_app_has_a_readme() -> None:
    assert [app for app in APPS if not (ROOT / app / "README.md").is_file()] == []


def test_every_module_named_in_the_architecture_exists() -> None:
    # The layout's names (`models/`, `api/urls.py`) are relative to an app: each exists in at least one.
    assert _missing(ARCHITECTURE, apps=APPS) == [], "docs/architecture.md names these; fix the doc or the code"


@pytest.mark.parametrize("app", APPS)
def test_every_module_named_in_an_apps_readme_exists(app: str) -> None:
    assert _missing(ROOT / app / "README.md", apps=(app,)) == [], f"{app}/README.md names these; fix it or the code"


@pytest.mark.parametrize("app", APPS)
def test_an_apps_readme_lists_each_of_its_modules(app: str) -> None:
    """A new module or package at an app's top level gets its row in the app's README."""
    tokens = _backticked(ROOT / app / "README.md")
    listed = {t.rstrip("/").split("/")[0] for t in tokens if _is_path(t)}
    listed |= {name.strip() for t in tokens for name in t.split(",")}  # `views.py`, `urls.py` in one cell
    entries = {
        p.name for p in (ROOT / app).iterdir()
        if p.name not in UNLISTED and ((p.is_file() and p.suffix == ".py") or (p / "__init__.py").is_file())
    }
    unlisted = sorted(e for e in entries if e not in listed and e.removesuffix(".py") not in listed)
    assert unlisted == [], f"{app}/README.md has no row for these; add one"


def test_the_docs_stand_alone() -> None:
    """The map points at nothing outside the repository (the conventions it came from are not shipped)."""
    docs = [ARCHITECTURE, *(ROOT / app / "README.md" for app in APPS), ROOT / "README.md", ROOT / "pyproject.toml"]
    pointing_out = [d.relative_to(ROOT).as_posix() for d in docs
                    if re.search(r"CONVENTIONS\.md|\.\./shared/CONVENTIONS", d.read_text(encoding="utf-8"))]
    assert pointing_out == []


def test_the_checks_see_the_names(tmp_path: Path) -> None:
    """The checks above are not vacuous: the map names many paths, made-up ones are caught, task names are read."""
    assert sum(_is_path(t) for t in _backticked(ARCHITECTURE)) > 50
    assert _dotted_exists("annotation.services.engine") and _dotted_exists("core.jobs.job_enqueue")
    assert "tasks.corpus_import" in _registered_task_names()
    doc = tmp_path / "README.md"
    doc.write_text("`core/jobs.py`, `jobs.py` and `core.jobs.job_running` exist; `core/no_such_module.py`, "
                   "`no_such.py`, `core.jobs.no_such_function` and `core.no_such_module` do not; "
                   "`models/<part>.py` and `/api/v1/` are not paths.", encoding="utf-8")
    assert _missing(doc, apps=("core",)) == [
        "core/no_such_module.py", "no_such.py", "core.jobs.no_such_function", "core.no_such_module"]
