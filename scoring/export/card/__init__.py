"""The dataset card of an export: the same facts as JSON (machines) and Markdown (people), section by section.

A section is a facts function (scoring.export.card.facts) and a renderer (scoring.export.card.markdown); SECTIONS
lists them in the card's order. A new section is one entry here plus its two functions.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scoring.export.card import facts, markdown
from scoring.export.card.annotators import annotators_facts, annotators_markdown
from scoring.export.card.context import CardContext
from scoring.export.card.language import language_facts, language_markdown
from scoring.export.card.uncertainty import uncertainty_facts, uncertainty_markdown

__all__ = ["SECTIONS", "CardContext", "CardSection", "card_build", "card_markdown"]


@dataclass(frozen=True)
class CardSection:
    key: str  # the card JSON's key
    title: str  # the Markdown heading
    build: Callable[[CardContext], Any]
    render: Callable[[Any], list[str]]


SECTIONS: tuple[CardSection, ...] = (
    CardSection("motivation", "Motivation and intended uses", facts.motivation_facts, markdown.motivation_markdown),
    CardSection("composition", "Composition", facts.composition_facts, markdown.composition_markdown),
    CardSection("language", "Language of the data and of the participants", language_facts, language_markdown),
    CardSection("collection", "Collection: who annotated, when, for what pay", facts.collection_facts,
                markdown.collection_markdown),
    CardSection("instructions", "Instructions, examples, practice items and consent (verbatim)",
                facts.instructions_facts, markdown.instructions_markdown),
    CardSection("annotators", "Annotators' data: pseudonyms, per-annotator labels, k-anonymity", annotators_facts,
                annotators_markdown),
    CardSection("agreement", "Agreement", facts.agreement_facts, markdown.agreement_markdown),
    CardSection("uncertainty", "Per-item uncertainty: how likely each gold label is right", uncertainty_facts,
                uncertainty_markdown),
    CardSection("models", "Model annotators (beside the crowd, never counted in it)", facts.models_facts,
                markdown.models_markdown),
    CardSection("leak_audit", "Leak audit", facts.leak_audit_facts, markdown.leak_audit_markdown),
    CardSection("preprocessing", "Preprocessing", facts.preprocessing_facts, markdown.preprocessing_markdown),
    CardSection("limitations", "Known limitations", facts.limitations_facts, markdown.limitations_markdown),
    CardSection("licences", "Licences and attribution", facts.licences_facts, markdown.licences_markdown),
    CardSection("files", "Files", facts.files_facts, markdown.files_markdown),
    CardSection("maintenance", "Versions and maintenance", facts.version_facts, markdown.version_markdown),
)


def card_build(ctx: CardContext, *, header: dict[str, Any]) -> dict[str, Any]:
    """The card as JSON: `header` (what, when, how to reproduce) and then every section's facts."""
    return {"card_version": 2, **header, **{section.key: section.build(ctx) for section in SECTIONS}}


def card_markdown(card: dict[str, Any]) -> str:
    title = card.get("pretty_name") or card.get("name") or card.get("file")
    lines = [f"# {title}", "",
             f"Dataset card (datasheet after Gebru et al. 2021) of `{card['name']}`, version {card['version']}: "
             f"{card['counts']['rows']} instances, format {card['format']}"
             + (" (ids only)" if card.get("ids_only") else "") + f", exported {card['created_at']}.", "",
             "Reproduce:", "", "```", card["command"], "```"]
    if card.get("votes_column"):
        lines += ["", f"Votes (`{card['votes_column']['column']}`): {card['votes_column']['note']}"]
    for section in SECTIONS:
        if section.key in card:
            lines += ["", f"## {section.title}", "", *section.render(card[section.key])]
    return "\n".join(lines) + "\n"
