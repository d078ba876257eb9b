"""The participant pages' catalogs are complete: every string marked for translation (makemessages, run into a
copy of `locale/`) has a translation, none fuzzy, in every shipped language and both domains (django, djangojs);
the committed .mo files are the compiled .po files; and nothing participant-facing is left unmarked (a scan of the
participant templates and scripts for visible text outside the translation tags and `gettext`)."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import polib
import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = ("fr", "de", "es", "it", "pt_BR", "ar")
DOMAINS = ("django", "djangojs")
TEMPLATES = [ROOT / "templates" / "base.html", *sorted((ROOT / "templates" / "annotation").glob("*.html"))]
SCRIPTS = [ROOT / "annotation" / "static" / "annotation" / name for name in ("annotator.js", "items.js", "endings.js")]
IGNORE = ["--ignore=.venv", "--ignore=node_modules", "--ignore=tests", "--ignore=benchmarks", "--ignore=staticfiles",
          "--ignore=templates/admin", "--ignore=*/templates/admin"]  # the admin is for researchers, in English


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """makemessages (GNU gettext's xgettext and msgmerge: `make gettext`) run on a copy of the code as it is now,
    merged into a copy of the committed catalogs: the repository's own files are never written."""
    if shutil.which("xgettext") is None:
        pytest.fail("GNU gettext is missing: run `make gettext` (apt-get install gettext)")
    copy = tmp_path_factory.mktemp("source") / "stylecrowd"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(
        ".venv", ".git", "node_modules", "tests", "benchmarks", "docs", "fixtures", "staticfiles", "*.pyc", "*.mo"))
    from django.conf import settings  # function-local: the override must not outlive this fixture

    saved, cwd = settings.LOCALE_PATHS, os.getcwd()
    settings.LOCALE_PATHS = [copy / "locale"]  # makemessages writes where the files' tree has its locale folder
    os.chdir(copy)
    try:
        options = {"locale": list(LANGUAGES), "verbosity": 0, "no_location": True}
        call_command("makemessages", *IGNORE, **options)
        call_command("makemessages", *IGNORE, "--ignore=*/preview.js", "--ignore=*/review.js", domain="djangojs",
                     **options)
    finally:
        os.chdir(cwd)
        settings.LOCALE_PATHS = saved
    return copy / "locale"


def _live(po: polib.POFile) -> list[polib.POEntry]:
    return [entry for entry in po if not entry.obsolete]


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("language", LANGUAGES)
def test_every_marked_string_is_translated(extracted: Path, language: str, domain: str) -> None:
    fresh = polib.pofile(str(extracted / language / "LC_MESSAGES" / f"{domain}.po"))
    committed = polib.pofile(str(ROOT / "locale" / language / "LC_MESSAGES" / f"{domain}.po"))
    missing = [entry.msgid for entry in _live(fresh) if not entry.translated()]
    fuzzy = [entry.msgid for entry in _live(fresh) if "fuzzy" in entry.flags]
    assert not missing, f"{language}/{domain}: untranslated (run `make messages`, then translate): {missing[:5]}"
    assert not fuzzy, f"{language}/{domain}: fuzzy: {fuzzy[:5]}"
    assert {e.msgid for e in _live(fresh)} == {e.msgid for e in _live(committed)}, "run `make messages`"
    assert "machine assistance" in committed.header and not committed.metadata_is_fuzzy


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_committed_mo_is_the_compiled_po(language: str, domain: str) -> None:
    folder = ROOT / "locale" / language / "LC_MESSAGES"
    po, mo = polib.pofile(str(folder / f"{domain}.po")), polib.mofile(str(folder / f"{domain}.mo"))
    compiled = {(e.msgid, e.msgstr or tuple(sorted(e.msgstr_plural.items()))) for e in _live(po)}
    stored = {(e.msgid, e.msgstr or tuple(sorted(e.msgstr_plural.items()))) for e in mo if e.msgid}
    assert compiled == stored, f"{folder}/{domain}.mo is stale: run `make messages`"


# --- nothing participant-facing left unmarked -------------------------------------------------------------------

_TEMPLATE_MARKUP = [
    r"\{#.*?#\}", r"\{%\s*blocktrans.*?endblocktrans\s*%\}", r"\{%\s*trans\s+\"[^\"]*\"\s*%\}",
    r"\{\{.*?\}\}", r"\{%.*?%\}", r"<script.*?</script>", r"<style.*?</style>", r"<!--.*?-->",
    # the researcher's preview banner (the admin's preview of the page) speaks to the researcher, in English
    r"<aside class=\"preview-banner\".*?</aside>",
]
_VISIBLE_ATTRIBUTES = re.compile(r"\b(?:aria-label|title|alt|placeholder)=\"([^\"{]+)\"")
_WORD = re.compile(r"[A-Za-z]{2,}")


def _unmarked_template_text(text: str) -> list[str]:
    for pattern in _TEMPLATE_MARKUP:
        text = re.sub(pattern, " ", text, flags=re.S)
    found = [value for value in _VISIBLE_ATTRIBUTES.findall(text) if _WORD.search(value)]
    text = re.sub(r"<[^>]+>", " ", text)
    found += [chunk.strip() for chunk in re.split(r"\s{2,}|\n", text) if _WORD.search(chunk.replace("StyleCrowd", ""))]
    return found


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.name)
def test_participant_templates_mark_every_visible_string(path: Path) -> None:
    assert _unmarked_template_text(path.read_text(encoding="utf-8")) == []


def test_the_template_scan_finds_an_unmarked_string() -> None:
    assert _unmarked_template_text('<p>{% trans "Fine" %}</p><p>Forgotten text</p><b aria-label="Close it">x</b>') \
        == ["Close it", "Forgotten text"]


_LITERAL = re.compile(r"\"((?:[^\"\\]|\\.)*)\"")
# Words and sentences a participant reads: a capitalised word followed by lower-case words, or any text ending
# in a sentence's punctuation. Class names, selectors, keys and codes are single lower-case tokens or symbols.
_PROSE = re.compile(r"^[A-Z][a-z’']+(?:[ ,:;][^\s]+)*$|[a-z]{2,}[ ,][a-z]{2,}.*[.?!:]$|^[A-Z][a-z]+$")
_NOT_PROSE = {"Enter", "A1", "A2", "S1", "S2", "BUTTON", "ArrowUp", "ArrowDown", "Escape", "Tab", "POST", "GET",
              "S1-S2", "S2-S1", "Content-Type"}


def _unmarked_script_strings(source: str) -> list[str]:
    found = []
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith(("//", "*", "/*")) or stripped == '"use strict";':
            continue
        code = line.split(" // ")[0]
        for match in _LITERAL.finditer(code):
            value = match.group(1)
            marked = re.search(r"gettext\(\s*$", code[:match.start()])
            if not marked and value not in _NOT_PROSE and _PROSE.search(value):
                found.append(value)
    return found


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_participant_scripts_mark_every_visible_string(path: Path) -> None:
    assert _unmarked_script_strings(path.read_text(encoding="utf-8")) == []


def test_the_script_scan_finds_an_unmarked_string() -> None:
    source = 'x.textContent = gettext("Fine.");\ny.textContent = "Forgotten sentence here.";\nz.className = "card";'
    assert _unmarked_script_strings(source) == ["Forgotten sentence here."]
