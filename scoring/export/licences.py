"""Licences travel with the text: an export lists every source corpus's licence, and refuses to write the text of a
corpus whose licence forbids redistribution (the ids-only form, with the recipe to rebuild, is offered instead)."""
from __future__ import annotations

from typing import Any

from core.errors import ApplicationError
from scoring.error_codes import NOT_REDISTRIBUTABLE
from tasks.licences import licence_get
from tasks.models import Corpus


def corpus_licence_facts(corpus: Corpus) -> dict[str, Any]:
    licence = licence_get(corpus.licence)
    return {
        "corpus": corpus.name, "licence": corpus.licence or None,
        "name": licence.name if licence else None, "url": licence.url if licence else None,
        "redistributable": None if licence is None else licence.redistributable,
        "hub_id": licence.hub_id if licence else "unknown",
        "attribution": corpus.attribution, "note": licence.note if licence else "",
    }


def export_licences(*, corpora: list[Corpus], ids_only: bool) -> list[dict[str, Any]]:
    """Every source corpus's licence; an error naming the corpora whose text may not be copied, unless `ids_only`."""
    facts = [corpus_licence_facts(corpus) for corpus in corpora]
    blocked = [f for f in facts if f["redistributable"] is False]
    if blocked and not ids_only:
        names = "; ".join(f"corpus '{f['corpus']}' ({f['licence']}: {f['name']})" for f in blocked)
        raise ApplicationError(
            f"Licence: this export would publish text from {names}, whose licence does not allow redistribution. "
            "Export the ids-only form instead (ids only): instance ids, labels and votes with the recipe to rebuild "
            "the texts from one's own copy of the corpus, as STEL did for GYAFC; or leave that corpus out of the "
            "selection.", code=NOT_REDISTRIBUTABLE, field="ids_only",
            details={"corpora": [f["corpus"] for f in blocked], "licences": [f["licence"] for f in blocked]})
    return facts


def hub_licence_ids(licences: list[dict[str, Any]]) -> list[str]:
    """The `license:` values of a Hugging Face card: every distinct licence, `unknown` for one not recorded."""
    ids = sorted({f["hub_id"] for f in licences})
    return ids or ["unknown"]
