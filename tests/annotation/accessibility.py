"""axe-core in the browser tests: `assert_accessible(page, where)` runs axe (the axe.min.js that the
axe-playwright-python package ships, MPL-2.0) on what the page shows now and fails on any critical or serious finding,
naming each rule, its help text and the elements it found."""
from __future__ import annotations

from typing import Any

from axe_playwright_python.base import AXE_SCRIPT

BLOCKING = ("critical", "serious")
# Every rule axe has, WCAG 2.x A/AA and best practices: a finding's impact decides, not its tag.
OPTIONS = {"resultTypes": ["violations"]}


def axe_violations(page: Any, *, exclude: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """axe's violations on the page as it is now, frames included (axe is injected into each one first)."""
    for frame in page.frames:
        frame.evaluate(AXE_SCRIPT)
    context = {"exclude": [[selector] for selector in exclude]} if exclude else None
    results = page.evaluate("([context, options]) => axe.run(context || document, options)", [context, OPTIONS])
    return results["violations"]


def describe(violations: list[dict[str, Any]]) -> str:
    lines = []
    for violation in violations:
        targets = "; ".join(" ".join(map(str, node["target"])) for node in violation["nodes"][:5])
        lines.append(f"{violation['id']} ({violation['impact']}): {violation['help']} — {targets}")
    return "\n".join(lines)


def assert_accessible(page: Any, where: str, *, exclude: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """No critical or serious axe finding on the page as it is now; returns the minor and moderate ones."""
    violations = axe_violations(page, exclude=exclude)
    blocking = [v for v in violations if v["impact"] in BLOCKING]
    assert not blocking, f"axe on {where}:\n{describe(blocking)}"
    return violations
