"""Replace error-code string literals by their constants: `code="not_found"` -> `code=NOT_FOUND`.

Re-runnable and idempotent: it rewrites only the literals core.error_catalogue finds where a code is given (see its
docstring), imports each constant from the app that declares it (`from core.error_codes import NOT_FOUND`; as
`NOT_FOUND_CODE` where the file already binds the name), lets ruff sort the imports it added, and leaves everything
else byte for byte. The wire value cannot change: a constant is the string it replaces.

    python scripts/codemod_error_codes.py           # rewrite; exit 1 if literals of undeclared codes remain
    python scripts/codemod_error_codes.py --check   # change nothing; exit 1 if anything would change

A literal whose code no app declares is left in place and listed ("undeclared"): declare it (with its meaning) in the
lowest app's error_codes.py that raises it, then run this again. So is one declared in an app above the file's own
("misplaced": importing it would break the layering): move its declaration down. The last line is a JSON summary.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")


def _local_name(value: str, module: str, scan, taken: set[str]) -> tuple[str, str | None]:
    """The name a file uses for a code, and the import it needs (None: the file imports it already)."""
    for local, known in scan.names.items():
        if known == value:
            return local, None
    name = value.upper()
    for candidate in (name, f"{name}_CODE", f"{name}_ERROR_CODE"):
        if candidate not in scan.bound and candidate not in scan.names and candidate not in taken:
            return candidate, (f"from {module} import {name}" if candidate == name else
                               f"from {module} import {name} as {candidate}")
    raise SystemExit(f"{scan.path}: no free name for the constant of {value!r}")


def _insert_at(tree: ast.Module) -> int:
    """The line after the last top-level import (after the docstring if the file has none)."""
    last = 0
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            last = node.end_lineno or node.lineno
    if not last and tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant):
        last = tree.body[0].end_lineno or 0
    return last


def rewrite(path: Path, sites, scan, declared, root: Path = ROOT) -> tuple[str, list[str]]:
    text = (root / path).read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    imports: list[str] = []
    aliases: list[str] = []
    taken: set[str] = set()
    by_line: dict[int, list] = defaultdict(list)
    for site in sites:
        module = declared[site.value].module
        local, needed = _local_name(site.value, module, scan, taken)
        scan.names[local] = site.value
        taken.add(local)
        if needed:
            imports.append(needed)
            if " as " in needed:
                aliases.append(f"{path}: {needed}")
        by_line[site.line].append((site.col, site.end_col, local))
    for number, spans in by_line.items():
        raw = lines[number - 1].encode("utf-8")
        for start, end, local in sorted(spans, reverse=True):  # right to left: earlier offsets stay valid
            raw = raw[:start] + local.encode() + raw[end:]
        lines[number - 1] = raw.decode("utf-8")
    if imports:
        at = _insert_at(scan.tree)
        lines[at:at] = [line + "\n" for line in sorted(set(imports))]
    return "".join(lines), aliases


def codemod(*, root: Path = ROOT, dirs: tuple[str, ...] | None = None, check: bool = False) -> dict:
    """Rewrite the literals under `root` (the app folders, or `dirs`); the summary that main() prints."""
    from core import error_catalogue

    dirs = dirs or error_catalogue.SOURCE_DIRS
    declared = error_catalogue.declarations()
    sites = error_catalogue.scan(root, dirs)
    literals, misplaced = [], []
    for site in error_catalogue.literal_sites(sites):
        if site.value not in declared:
            continue
        home = declared[site.value].module.split(".")[0]
        app = site.path.parts[0]
        if app in error_catalogue.APPS and error_catalogue.APPS.index(home) > error_catalogue.APPS.index(app):
            # importing it would point the layering upward: the declaration moves down to this app (or lower)
            misplaced.append(f"{site.where()}: {site.value!r} is declared in {home}, above {app}")
        else:
            literals.append(site)
    undeclared = [f"{s.where()}: {s.value!r}" for s in error_catalogue.undeclared(sites)]
    by_file: dict[Path, list] = defaultdict(list)
    for site in literals:
        by_file[site.path].append(site)
    changed, aliases = [], []
    for path, file_sites in sorted(by_file.items()):
        scan = error_catalogue._read(path, root)
        new_text, file_aliases = rewrite(path, file_sites, scan, declared, root)
        aliases += file_aliases
        changed.append(path)
        if not check:
            (root / path).write_text(new_text, encoding="utf-8")
    ruff_ok = True
    if changed and not check:
        ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
        if ruff:  # sort and merge the imports added (isort's rules, as `make lint` checks them)
            result = subprocess.run([ruff, "check", "--fix", "--quiet", "--select", "I001", *map(str, changed)],
                                    cwd=root, capture_output=True, text=True)
            ruff_ok = result.returncode == 0
            if not ruff_ok:
                print(result.stdout + result.stderr, file=sys.stderr)
        else:
            ruff_ok = False
            print("ruff not found: sort the imports of the changed files (ruff check --fix --select I001)",
                  file=sys.stderr)
    for line in undeclared + misplaced:
        print(f"left as a literal: {line}", file=sys.stderr)
    return {"ok": not undeclared and not misplaced and ruff_ok and not (check and changed), "check": check,
            "replaced": len(literals), "files": len(changed), "changed": [str(p) for p in changed],
            "aliased": aliases, "undeclared": undeclared, "misplaced": misplaced}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything would change")
    args = parser.parse_args()

    import django

    django.setup()
    summary = codemod(check=args.check)
    print(json.dumps(summary))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
