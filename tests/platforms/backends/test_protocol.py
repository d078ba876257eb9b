"""Every registered backend satisfies the PlatformBackend Protocol (mypy checks the signatures in `make lint`; this
checks at run time that nothing is missing), and the services ask the backend instead of branching on a name."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.utils.module_loading import import_string

from platforms.backends import PLATFORM_BACKENDS, backend_class, backend_for
from platforms.backends.base import PlatformBackend
from platforms.models import Platform, PlatformAccount

ROOT = Path(__file__).resolve().parents[3]


def test_every_platform_has_a_registered_backend() -> None:
    assert sorted(PLATFORM_BACKENDS) == sorted(Platform.values)


@pytest.mark.parametrize("platform", sorted(PLATFORM_BACKENDS))
def test_each_backend_is_a_platform_backend(platform: str) -> None:
    backend = backend_for(PlatformAccount(name="x", platform=platform))
    assert isinstance(backend, PlatformBackend)
    assert backend.platform == platform and backend_class(platform) is import_string(PLATFORM_BACKENDS[platform])
    assert backend.BONUS_MODE in ("bulk", "each") and backend.DECIDED.get("approve")


def test_a_backend_missing_a_method_is_not_one() -> None:
    class Half:
        platform = "half"

        def send(self, call: object) -> None: ...

    assert not isinstance(Half(), PlatformBackend)


def test_no_service_or_admin_branches_on_a_platform_name() -> None:
    pattern = re.compile(r"""==\s*["'](prolific|mturk|mock)["']|!=\s*["'](prolific|mturk|mock)["']|"""
                         r"""Platform\.(PROLIFIC|MTURK|MOCK)\b|platform=["'](prolific|mturk)["']""")
    hits = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
            for folder in ("platforms/services", "platforms/admin")
            for path in sorted((ROOT / folder).glob("*.py"))
            for n, line in enumerate(path.read_text().splitlines(), start=1) if pattern.search(line)]
    assert hits == []


def test_mypy_accepts_every_backend_as_the_protocol(tmp_path: Path) -> None:
    """A function typed to take the Protocol, given each backend: mypy says whether the signatures fit."""
    probe = tmp_path / "probe.py"
    lines = ["from platforms.backends.base import PlatformBackend"]
    for n, path in enumerate(PLATFORM_BACKENDS.values()):
        module, name = path.rsplit(".", 1)
        lines += [f"from {module} import {name} as B{n}", f"def use{n}(b: B{n}) -> PlatformBackend:", "    return b"]
    probe.write_text("\n".join(lines) + "\n")
    result = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                             str(probe)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
