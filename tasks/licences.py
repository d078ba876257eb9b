"""The licences a corpus can be recorded under: what each allows, and how the Hugging Face hub and Croissant name it.

A corpus records its licence at import as an SPDX identifier (or a `LicenseRef-` of our own for licences SPDX does
not list, such as GYAFC's); an export reads `redistributable` to decide whether the text may leave the server at
all. Defined here, in the lowest app that needs it (imports validate it; scoring's exports read it).
"""
from __future__ import annotations

from dataclasses import dataclass

from core.errors import ApplicationError
from tasks.error_codes import UNKNOWN_LICENCE


@dataclass(frozen=True)
class Licence:
    id: str  # SPDX identifier, or LicenseRef-… for one SPDX does not list
    name: str
    url: str
    redistributable: bool  # may the text itself be copied into a published benchmark?
    hub_id: str  # the `license:` value of a Hugging Face dataset card ("other" when the hub has none)
    attribution_required: bool = True
    note: str = ""


GYAFC = "LicenseRef-GYAFC"
NOT_REDISTRIBUTABLE = "LicenseRef-not-redistributable"

LICENCES: dict[str, Licence] = {licence.id: licence for licence in (
    Licence("MIT", "MIT License", "https://spdx.org/licenses/MIT.html", True, "mit"),
    Licence("Apache-2.0", "Apache License 2.0", "https://spdx.org/licenses/Apache-2.0.html", True, "apache-2.0"),
    Licence("BSD-2-Clause", "BSD 2-Clause License", "https://spdx.org/licenses/BSD-2-Clause.html", True,
            "bsd-2-clause"),
    Licence("BSD-3-Clause", "BSD 3-Clause License", "https://spdx.org/licenses/BSD-3-Clause.html", True,
            "bsd-3-clause"),
    Licence("GPL-3.0-only", "GNU General Public License v3.0 only", "https://spdx.org/licenses/GPL-3.0-only.html",
            True, "gpl-3.0", note="copies must stay under the GPL-3.0 with its text"),
    Licence("GPL-3.0-or-later", "GNU General Public License v3.0 or later",
            "https://spdx.org/licenses/GPL-3.0-or-later.html", True, "gpl-3.0",
            note="copies must stay under the GPL-3.0 (or later) with its text"),
    Licence("LGPL-3.0-only", "GNU Lesser General Public License v3.0 only",
            "https://spdx.org/licenses/LGPL-3.0-only.html", True, "lgpl-3.0"),
    Licence("AGPL-3.0-only", "GNU Affero General Public License v3.0 only",
            "https://spdx.org/licenses/AGPL-3.0-only.html", True, "agpl-3.0"),
    Licence("CC0-1.0", "Creative Commons Zero v1.0 Universal", "https://spdx.org/licenses/CC0-1.0.html", True,
            "cc0-1.0", attribution_required=False),
    Licence("CC-BY-4.0", "Creative Commons Attribution 4.0", "https://spdx.org/licenses/CC-BY-4.0.html", True,
            "cc-by-4.0"),
    Licence("CC-BY-SA-4.0", "Creative Commons Attribution Share Alike 4.0",
            "https://spdx.org/licenses/CC-BY-SA-4.0.html", True, "cc-by-sa-4.0"),
    Licence("CC-BY-NC-4.0", "Creative Commons Attribution Non Commercial 4.0",
            "https://spdx.org/licenses/CC-BY-NC-4.0.html", True, "cc-by-nc-4.0", note="no commercial use"),
    Licence("CC-BY-NC-SA-4.0", "Creative Commons Attribution Non Commercial Share Alike 4.0",
            "https://spdx.org/licenses/CC-BY-NC-SA-4.0.html", True, "cc-by-nc-sa-4.0", note="no commercial use"),
    Licence("CC-BY-3.0", "Creative Commons Attribution 3.0", "https://spdx.org/licenses/CC-BY-3.0.html", True,
            "cc-by-3.0"),
    Licence("CC-BY-SA-3.0", "Creative Commons Attribution Share Alike 3.0",
            "https://spdx.org/licenses/CC-BY-SA-3.0.html", True, "cc-by-sa-3.0"),
    Licence("ODC-By-1.0", "Open Data Commons Attribution License v1.0", "https://spdx.org/licenses/ODC-By-1.0.html",
            True, "odc-by"),
    Licence("ODbL-1.0", "Open Data Commons Open Database License v1.0", "https://spdx.org/licenses/ODbL-1.0.html",
            True, "odbl"),
    Licence("PDDL-1.0", "Open Data Commons Public Domain Dedication & License 1.0",
            "https://spdx.org/licenses/PDDL-1.0.html", True, "pddl", attribution_required=False),
    Licence(GYAFC, "Yahoo! Answers Formality Corpus (GYAFC) licence: research use, no redistribution",
            "https://github.com/raosudha89/GYAFC-corpus", False, "other",
            note="request the corpus from Yahoo (L6 Yahoo Answers) and the authors; it may not be copied"),
    Licence(NOT_REDISTRIBUTABLE, "A licence that forbids redistribution (proprietary, licensed to you only)", "",
            False, "other"),
)}

# What people type: SPDX's deprecated short names and a few plain words.
ALIASES = {"gpl-3.0": "GPL-3.0-only", "gpl-3": "GPL-3.0-only", "gplv3": "GPL-3.0-only", "gpl-3.0+": "GPL-3.0-or-later",
           "lgpl-3.0": "LGPL-3.0-only", "agpl-3.0": "AGPL-3.0-only", "cc0": "CC0-1.0", "cc-by": "CC-BY-4.0",
           "gyafc": GYAFC, "yahoo-gyafc": GYAFC, "not-redistributable": NOT_REDISTRIBUTABLE,
           "proprietary": NOT_REDISTRIBUTABLE}
_BY_LOWER = {**{key.lower(): key for key in LICENCES}, **ALIASES}

# What the importers of published corpora record when the researcher names no licence.
STEL_LICENCE = "MIT"
STEL_ATTRIBUTION = ("STEL: Wegmann & Nguyen (2021), Does It Capture STEL? A Modular, Similarity-based Linguistic "
                    "Style Evaluation Framework, EMNLP; github.com/nlpsoc/STEL (MIT)")
TURKCORPUS_LICENCE = "GPL-3.0-only"
TURKCORPUS_ATTRIBUTION = ("TurkCorpus: Xu, Napoles, Pavlick, Chen & Callison-Burch (2016), Optimizing Statistical "
                          "Machine Translation for Text Simplification, TACL 4; github.com/cocoxu/simplification "
                          "(GPL-3.0)")
GYAFC_ATTRIBUTION = ("GYAFC: Rao & Tetreault (2018), Dear Sir or Madam, May I Introduce the GYAFC Dataset, NAACL; "
                     "licensed by Yahoo, not redistributable")


def licence_choices() -> list[tuple[str, str]]:
    """For forms: (id, "id: name"), with the empty choice meaning "not recorded"."""
    return [("", "not recorded"), *((key, f"{key}: {licence.name}") for key, licence in LICENCES.items())]


def licence_resolve(value: str, *, field: str = "licence") -> str:
    """The canonical id of what the researcher typed ("" stays "": not recorded); an unknown one is refused."""
    text = (value or "").strip()
    if not text:
        return ""
    canonical = _BY_LOWER.get(text.lower())
    if canonical is None:
        raise ApplicationError(
            f"Licence: unknown licence {text!r}; use an SPDX identifier of {', '.join(LICENCES)} "
            f"({GYAFC} for GYAFC, {NOT_REDISTRIBUTABLE} for any licence that forbids copying the text)",
            code=UNKNOWN_LICENCE, field=field)
    return canonical


def licence_get(licence_id: str) -> Licence | None:
    """The licence of a stored id; None when none was recorded (or an id from before this registry)."""
    return LICENCES.get(licence_id or "")
