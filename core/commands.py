"""Base class for management commands: parse, call a service, print a JSON summary as the last line."""
from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from core.errors import ApplicationError


def json_default(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return str(value)


class JsonCommand(BaseCommand):
    """Subclasses implement `run(**options) -> dict`; the dict is printed as one JSON line on stdout.

    On an ApplicationError the command prints `{"ok": false, "error": ...}` as its last line and exits 1.
    """

    def run(self, **options: Any) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            summary = self.run(**options)
        except ApplicationError as exc:
            self.stdout.write(json.dumps({"ok": False, "error": exc.as_dict()}, default=json_default))
            raise CommandError(exc.message, returncode=1) from exc
        summary = {"ok": True, **summary}
        self.stdout.write(json.dumps(summary, default=json_default, ensure_ascii=False))

    def progress(self, iterable: Any = None, *, total: int | None = None, desc: str = "") -> Any:
        """A tqdm bar on stderr, so stdout stays clean for the JSON summary."""
        from tqdm import tqdm

        return tqdm(iterable, total=total, desc=desc, file=sys.stderr, disable=None, leave=False)

    @contextmanager
    def progress_bar(self, desc: str) -> Iterator[Callable[[int, int], None]]:
        """A progress bar driven by the `progress(done, total)` callback that services accept."""
        bar = self.progress(desc=desc)

        def report(done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        try:
            yield report
        finally:
            bar.close()
