"""The participant's task description of an ordering study, composed from its style components and its setup.

Every component has its own wording of what differs and its own worked example, so a simplicity study is never
explained with an informal/formal example; every setup (quadruple, triple, style-or-content) has its own task
wording. A component without a worked example here (one a researcher added) is described by its two labels.
"""
from __future__ import annotations

from dataclasses import dataclass

from annotation.models import ItemKind
from tasks.models import StyleComponent


@dataclass(frozen=True)
class ComponentText:
    contrast: str  # what differs between the two styles, in plain words
    anchors: tuple[str, str]  # the same content in style 1 and style 2
    sentences: tuple[str, str]  # other content, again in style 1 and style 2


COMPONENT_TEXTS: dict[str, ComponentText] = {
    "formality": ComponentText(
        "how formal they are: casual, chatty writing or careful, formal writing",
        ("gonna be late lol", "I am going to be late."),
        ("pls help me out", "I would appreciate your help with this."),
    ),
    "simplicity": ComponentText(
        "how simple the wording is: long, rare words and complex sentences, or short, everyday words",
        ("The committee deliberated extensively prior to reaching a unanimous determination.",
         "The group talked for a long time before they all agreed."),
        ("Attendance is obligatory for all personnel irrespective of seniority.",
         "Everyone who works here has to come, even the bosses."),
    ),
    "contraction": ComponentText(
        "whether words are written out in full or contracted: \"do not\", \"it is\" or \"don't\", \"it's\"",
        ("I do not think we will make it in time.", "I don't think we'll make it in time."),
        ("She is sure that it is not her bag.", "She's sure that it isn't her bag."),
    ),
    "nbr_substitution": ComponentText(
        "whether letters are replaced by look-alike numbers: \"cool\" or \"c00l\", \"elite\" or \"3l1t3\"",
        ("This game is so cool.", "Th1s g4me 1s s0 c00l."),
        ("You are a total noob at this.", "Y0u 4re 4 t0t4l n00b 4t th1s."),
    ),
    "shakespeare": ComponentText(
        "whether the English is modern or early modern (as in Shakespeare's plays)",
        ("Why are you leaving me so soon?", "Wherefore dost thou leave me so soon?"),
        ("It is a shame, uncle.", "Why, uncle, 'tis a shame."),
    ),
}

KEYS = {
    ItemKind.QUADRUPLE: "Keys: press 1 for S1-S2, 2 for S2-S1.",
    ItemKind.TRIPLE: "Keys: press 1 for S1, 2 for S2.",
    ItemKind.STYLE_OR_CONTENT: "Keys: press 1 for S1, 2 for S2.",
}


def _contrast(components: list[StyleComponent]) -> str:
    """One sentence saying how the two styles differ."""
    parts = []
    for component in components:
        text = COMPONENT_TEXTS.get(component.name)
        parts.append(text.contrast if text else f"whether a sentence is {component.label_1} or {component.label_2}")
    if len(parts) == 1:
        return f"The styles differ in {parts[0]}."
    return "In each question the styles differ in one of these ways: " + "; or ".join(parts) + "."


def _example(setup: str, component: StyleComponent) -> str:
    text = COMPONENT_TEXTS.get(component.name)
    if text is None:
        return ""
    (a_1, a_2), (s_1, s_2) = text.anchors, text.sentences
    l_1, l_2 = component.label_1, component.label_2
    if setup == ItemKind.QUADRUPLE:
        lines = [f"A1: {a_1}", f"A2: {a_2}", f"S1: {s_2}", f"S2: {s_1}",
                 f"Answer: S2-S1 (S2 is {l_1} like A1, S1 is {l_2} like A2)."]
    elif setup == ItemKind.TRIPLE:
        lines = [f"A1: {a_1}", f"S1: {s_2}", f"S2: {s_1}", f"Answer: S2 ({l_1}, like A1)."]
    else:  # style or content: S1 says what A1 says in the other style; S2 says something else in A1's style
        lines = [f"A1: {a_1}", f"S1: {a_2}", f"S2: {s_1}",
                 f"Answer: S2 ({l_1} like A1, even though S1 says what A1 says)."]
    return "\n".join(f"  {line}" if not line.startswith("Answer") else line for line in lines)


def task_description_compose(*, setup: str, components: list[StyleComponent]) -> str:
    """The instructions of an ordering study over these components (sorted by name) in this setup."""
    contrast = _contrast(components)
    if setup == ItemKind.QUADRUPLE:
        intro = (
            'In each question you see four sentences: two "anchor" sentences, A1 and A2, and two sentences S1 and '
            f"S2. A1 and A2 say the same thing in two different styles. {contrast} S1 and S2 also "
            "say the same thing as each other (something different from A1 and A2), again in the two styles.\n\n"
            "Your task: match S1 and S2 to the anchors by style, ignoring what the sentences are about. Choose "
            '"S1-S2" if S1 has the style of A1 and S2 the style of A2, or "S2-S1" if S2 has the style of A1 and S1 '
            "the style of A2."
        )
    elif setup == ItemKind.TRIPLE:
        intro = (
            'In each question you see one "anchor" sentence A1 and two sentences S1 and S2. S1 and S2 say the same '
            f"thing in two different styles. {contrast}\n\n"
            "Your task: choose the sentence, S1 or S2, that is closest in style to A1, ignoring what the sentences "
            "are about."
        )
    else:
        intro = (
            'In each question you see one "anchor" sentence A1 and two sentences S1 and S2. One of S1 and S2 has '
            "the same style as A1 (but says something else); the other says what A1 says (but in a different "
            f"style). {contrast}\n\n"
            "Your task: choose the sentence, S1 or S2, that has the same style as A1 — not the one that means the "
            "same."
        )
    blocks = [intro]
    examples = [(component, _example(setup, component)) for component in components]
    examples = [(component, text) for component, text in examples if text]
    for component, text in examples:
        heading = "Example" if len(examples) == 1 else f"Example ({component.name.replace('_', ' ')})"
        blocks.append(f"{heading}\n{text}")
    blocks.append(KEYS[ItemKind(setup)])
    return "\n\n".join(blocks)
