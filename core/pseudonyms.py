"""Keyed pseudonyms: what stands for a person's platform id in everything that leaves the database.

One function, HMAC-SHA256 keyed with `STYLECROWD_PSEUDONYM_KEY` (the environment; production refuses to start
without it). The same (platform, id) gives the same pseudonym within a release; a release `salt` gives another
mapping, so two releases cannot be joined on annotators unless the researcher uses one salt for both. Without the
key a pseudonym cannot be turned back into the id, nor recomputed from a guessed id (MTurk worker ids are public on
Amazon profiles, so an unkeyed hash would be reversible by anyone with a list of them).

`person_key` is the unsalted form the database keeps for a person it must recognise later without holding their id:
erasure tombstones and ids replaced at the end of retention.
"""
from __future__ import annotations

import hashlib
import hmac

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

PSEUDONYM_PREFIX = "ps-"
# 20 hex digits (80 bits): collisions stay below one in a billion for ten million people.
PSEUDONYM_HEX_DIGITS = 20


def _key() -> bytes:
    key = getattr(settings, "STYLECROWD_PSEUDONYM_KEY", "")
    if not key:
        raise ImproperlyConfigured("STYLECROWD_PSEUDONYM_KEY is not set: pseudonyms need a key from the environment.")
    return key.encode()


def _digest(message: str) -> str:
    return PSEUDONYM_PREFIX + hmac.new(_key(), message.encode(), hashlib.sha256).hexdigest()[:PSEUDONYM_HEX_DIGITS]


def person_key(*, platform: str, external_id: str) -> str:
    """The unsalted pseudonym the database keeps in place of a raw id (tombstones, ids past retention or erasure).
    An id that already is one is returned unchanged."""
    if is_pseudonym(external_id):
        return external_id
    return _digest(f"{platform}\x1f{external_id}")


def pseudonym(*, platform: str, external_id: str, salt: str = "") -> str:
    """The keyed pseudonym of one person (`ps-` and 20 hex digits): the person key, or with a release `salt` a
    pseudonym keyed by the salt too. Salted pseudonyms are derived from the person key, so a person whose raw id was
    already replaced (retention) keeps the same pseudonym in a later release with the same salt."""
    key = person_key(platform=platform, external_id=external_id)
    return _digest(f"salt\x1f{salt}\x1f{key}") if salt else key


def is_pseudonym(value: str) -> bool:
    return (isinstance(value, str) and value.startswith(PSEUDONYM_PREFIX)
            and len(value) == len(PSEUDONYM_PREFIX) + PSEUDONYM_HEX_DIGITS
            and all(c in "0123456789abcdef" for c in value[len(PSEUDONYM_PREFIX):]))
