"""Base class for management commands: parse, call a service, print a JSON summary as the last line."""
from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from core.errors import ApplicationError
from core.json_guard import JsonRefused, json_parse


def json_file_read(path: str, flag: str, *, expect_list: str = "") -> Any:
    """A JSON file named by a command option: missing file, bad encoding and bad JSON are errors naming the option or
    the file and line; with `expect_list` (what the list holds), anything but a JSON list is refused too."""
    file = Path(path)
    try:
        data = json_parse(file.read_bytes().decode("utf-8-sig"))
    except JsonRefused as exc:  # too deep, a NUL character, a number no field stores: named where it is
        raise ApplicationError(f"{file}: {exc.message}") from None
    except FileNotFoundError:
        raise ApplicationError(f"{flag}: file {file} not found.") from None
    except UnicodeDecodeError as exc:
        raise ApplicationError(f"{file}: not valid UTF-8 (byte offset {exc.start}).") from None
    except json.JSONDecodeError as exc:
        raise ApplicationError(f"{file}: line {exc.lineno}: invalid JSON ({exc.msg}).") from exc
    if expect_list and not isinstance(data, list):
        raise ApplicationError(f"{file}: expected a JSON list of {expect_list}.")
    return data


def cli_message(exc: ApplicationError, parser: Any, aliases: dict[str, str] | None = None) -> str:
    """The error's message for the command line: `exc.field` (a service keyword) shown as this command's flag.

    Services word their messages for every door ("Screening questions per batch: …"); a command whose option
    stores into `exc.field` (or into `aliases[exc.field]`, where the command's option is named differently from the
    service's keyword) appends that option, e.g. " (--screening-per-batch)"."""
    field = getattr(exc, "field", None)
    if not field:
        return exc.message
    field = (aliases or {}).get(field, field)
    for action in getattr(parser, "_actions", []):
        if action.dest == field and action.option_strings:
            flag = next((o for o in action.option_strings if o.startswith("--")), action.option_strings[0])
            if flag not in exc.message:
                return f"{exc.message} ({flag})"
            break
    return exc.message


def json_default(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return str(value)


class JsonCommand(BaseCommand):
    """Subclasses implement `run(**options) -> dict`; the dict is printed as one JSON line on stdout.

    On an ApplicationError the command prints `{"ok": false, "error": ...}` as its last line and exits 1; the
    message names the option `error.details.field` stands for (see `cli_message`; `cli_fields` maps a service keyword
    to the option's dest where the two differ).
    """

    cli_fields: dict[str, str] = {}

    def run(self, **options: Any) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            summary = self.run(**options)
        except ApplicationError as exc:
            parser = self.create_parser("manage.py", self.__class__.__module__.rsplit(".", 1)[-1])
            error = {**exc.as_dict(), "message": cli_message(exc, parser, self.cli_fields)}
            self.stdout.write(json.dumps({"ok": False, "error": error}, default=json_default))
            raise CommandError(error["message"], returncode=1) from exc
        summary = {"ok": True, **summary}
        self.stdout.write(json.dumps(summary, default=json_default, ensure_ascii=False))

    def progress(self, iterable: Any = None, *, total: int | None = None, desc: str = "") -> Any:
        """A tqdm bar on stderr, so stdout stays clean for the JSON summary."""

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
