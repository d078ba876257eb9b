"""Contraction rules both ways, each change listed."""
from __future__ import annotations

from tasks.services.contraction_rules import contract, expand


def test_expand_and_contract_are_inverse_on_a_plain_sentence():
    expanded, changes, *_ = expand("I don't know")
    assert expanded == "I do not know" and changes == ["don't -> do not"]
    contracted, changes = contract("I do not know")
    assert contracted == "I don't know" and changes == ["do not -> don't"]


def test_a_sentence_without_contractions_is_unchanged():
    assert expand("The cat sat on the mat.")[:2] == ("The cat sat on the mat.", [])
