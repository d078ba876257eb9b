"""No hidden cycles: an import inside a function says why it is there.

An `import` inside a `def` is how an import cycle hides (the module would fail to load with the import at the top) and
how a heavy library stays out of a process that never needs it. The second is a reason; the first is a fault to fix
(services queue jobs by the task's registered name, selectors read, the layers in pyproject.toml's import-linter
contracts go one way). So every function-local import carries a comment on its line or on the line above it (one
comment may head a block of consecutive imports): "# heavy: torch loads only when a model runs", "# cycle: …"."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ("config", "core", "tasks", "annotation", "platforms", "scoring")


def _modules() -> list[Path]:
    return sorted(p for app in APPS for p in (ROOT / app).rglob("*.py") if "migrations" not in p.parts)


def _local_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: dict[int, ast.Import | ast.ImportFrom] = {}
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    found[node.lineno] = node
    return [found[line] for line in sorted(found)]


def unexplained_local_imports(source: str) -> list[int]:
    """The line numbers of the function-local imports in `source` that no comment explains."""
    lines = source.splitlines()
    imports = _local_imports(ast.parse(source))
    import_lines = {line for node in imports for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)}
    unexplained = []
    for node in imports:
        if "#" in lines[node.lineno - 1]:
            continue
        above = node.lineno - 1  # walk up over the block of imports this one belongs to
        while above >= 1 and above in import_lines:
            above -= 1
        if above < 1 or not lines[above - 1].strip().startswith("#"):
            unexplained.append(node.lineno)
    return unexplained


def test_every_function_local_import_says_why() -> None:
    offenders = [f"{path.relative_to(ROOT)}:{line}" for path in _modules()
                 for line in unexplained_local_imports(path.read_text(encoding="utf-8"))]
    assert offenders == [], (
        "a function-local import without a comment saying why (move it to the top, or comment it: "
        f"'# heavy: …' / '# cycle: …'): {offenders}")


def test_the_check_sees_a_bare_local_import_and_accepts_a_commented_block() -> None:
    source = (
        "import os\n\n\n"
        "def bare():\n"
        "    from json import dumps\n"
        "    return dumps\n\n\n"
        "def explained():\n"
        "    # heavy: only this path needs them\n"
        "    import torch\n"
        "    from transformers import (\n"
        "        AutoModel,\n"
        "    )\n"
        "    import numpy  # heavy: numbers\n"
        "    x = 1\n"
        "    import scipy\n"
        "    return torch, AutoModel, numpy, scipy, x\n"
    )
    assert unexplained_local_imports(source) == [5, 17]


def test_the_apps_have_function_local_imports_to_check() -> None:
    # The walk must find the model loaders' deferred torch imports, or it is looking at the wrong files.
    found = {path.relative_to(ROOT).as_posix() for path in _modules() if _local_imports(ast.parse(path.read_text()))}
    assert "core/model_backends/causal_lm.py" in found
