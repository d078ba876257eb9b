"""`manage.py audit_instances --corpus NAME [--setup SETUP] [--fail-on-leak] --json`: do trivial surface features
(tokenization artefacts, apostrophes, final punctuation, digits, case, length) decide the corpus's instances?"""
from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from core.commands import JsonCommand
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from tasks.error_codes import LEAK_DETECTED
from tasks.models import Corpus, Setup
from tasks.services.leaks import instances_audit


class Command(JsonCommand):
    help = "Audit a corpus's generated instances for surface features that give the label away (leaks)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--corpus", required=True)
        parser.add_argument("--setup", choices=Setup.values, help="Only this setup (default: every instance).")
        parser.add_argument("--alpha", type=float, default=1e-3, help="Significance level (Bonferroni over features).")
        parser.add_argument("--min-accuracy-decided", type=float, default=0.8,
                            help="A leak is right at least this often on the instances it decides.")
        parser.add_argument("--fail-on-leak", action="store_true", help="Exit 1 when a leak is found.")
        parser.add_argument("--style-marker", action="append", default=None, metavar="FEATURE",
                            help="A feature that is the component's style itself (a note, not a leak); repeatable. "
                                 "Default: the component's known markers (digits for nbr_substitution; case and "
                                 "final punctuation for formality). --style-marker none: no markers.")
        parser.add_argument("--json", action="store_true", help="Accepted for symmetry: the last line is JSON.")

    def run(self, **options: Any) -> dict[str, Any]:
        corpus = Corpus.objects.select_related("component").filter(name=options["corpus"]).first()
        if corpus is None:
            raise ApplicationError(f"no corpus named {options['corpus']!r}", code=NOT_FOUND, status=404)
        given = options["style_marker"]
        markers = None if given is None else frozenset(m for m in given if m != "none")
        report = instances_audit(corpus=corpus, setup=options["setup"], alpha=options["alpha"],
                                 min_accuracy_decided=options["min_accuracy_decided"], style_markers=markers)
        for warning in report["warnings"]:
            self.stderr.write(f"warning: {warning}")
        for note in report["notes"]:
            self.stderr.write(f"note: {note}")
        if report["leaks"] and options["fail_on_leak"]:
            raise ApplicationError("; ".join(report["warnings"]), code=LEAK_DETECTED)
        return report
