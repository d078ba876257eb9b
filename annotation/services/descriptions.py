"""The participant's task description of an ordering study, composed from its style components and its setup, in
the study's language.

Every component has its own wording of what differs and its own worked example, so a simplicity study is never
explained with an informal/formal example; every setup (quadruple, triple, style-or-content) has its own task
wording. A component without a worked example here (one a researcher added) is described by its two labels, as the
researcher wrote them. Every fixed sentence, contrast, example sentence and the built-in components' names and
labels are msgids (`make messages`), rendered in the study's language (its catalog; English where it has none): a
translated example is written in that language's two styles, not a translation word for word.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.utils import translation
from django.utils.translation import gettext, gettext_noop

from annotation.models import ItemKind
from tasks.models import StyleComponent


@dataclass(frozen=True)
class ComponentText:
    contrast: str  # what differs between the two styles, in plain words
    anchors: tuple[str, str]  # the same content in style 1 and style 2
    sentences: tuple[str, str]  # other content, again in style 1 and style 2
    labels: tuple[str, str] = ("", "")  # the component's built-in labels (tasks' STEL components), as msgids
    title: str = ""  # the component's name in words, for the example's heading


# Translators: each example pair is the same content in the component's two styles; write them in your language's
# two styles (informal/formal, complex/simple…), keeping the contrast visible.
COMPONENT_TEXTS: dict[str, ComponentText] = {
    "formality": ComponentText(
        gettext_noop("how formal they are: casual, chatty writing or careful, formal writing"),
        (gettext_noop("gonna be late lol"), gettext_noop("I am going to be late.")),
        (gettext_noop("pls help me out"), gettext_noop("I would appreciate your help with this.")),
        (gettext_noop("informal"), gettext_noop("formal")), gettext_noop("formality"),
    ),
    "simplicity": ComponentText(
        gettext_noop("how simple the wording is: long, rare words and complex sentences, or short, everyday words"),
        (gettext_noop("The committee deliberated extensively prior to reaching a unanimous determination."),
         gettext_noop("The group talked for a long time before they all agreed.")),
        (gettext_noop("Attendance is obligatory for all personnel irrespective of seniority."),
         gettext_noop("Everyone who works here has to come, even the bosses.")),
        (gettext_noop("complex"), gettext_noop("simple")), gettext_noop("simplicity"),
    ),
    "contraction": ComponentText(
        gettext_noop("whether words are written out in full or contracted: \"do not\", \"it is\" or \"don't\", "
                     "\"it's\""),
        (gettext_noop("I do not think we will make it in time."), gettext_noop("I don't think we'll make it in time.")),
        (gettext_noop("She is sure that it is not her bag."), gettext_noop("She's sure that it isn't her bag.")),
        (gettext_noop("expanded"), gettext_noop("contracted")), gettext_noop("contraction"),
    ),
    "nbr_substitution": ComponentText(
        gettext_noop("whether letters are replaced by look-alike numbers: \"cool\" or \"c00l\", \"elite\" or "
                     "\"3l1t3\""),
        (gettext_noop("This game is so cool."), gettext_noop("Th1s g4me 1s s0 c00l.")),
        (gettext_noop("You are a total noob at this."), gettext_noop("Y0u 4re 4 t0t4l n00b 4t th1s.")),
        (gettext_noop("plain"), gettext_noop("substituted")), gettext_noop("nbr substitution"),
    ),
    "shakespeare": ComponentText(
        gettext_noop("whether the English is modern or early modern (as in Shakespeare's plays)"),
        (gettext_noop("Why are you leaving me so soon?"), gettext_noop("Wherefore dost thou leave me so soon?")),
        (gettext_noop("It is a shame, uncle."), gettext_noop("Why, uncle, 'tis a shame.")),
        (gettext_noop("modern"), gettext_noop("shakespearean")), gettext_noop("shakespeare"),
    ),
}

KEYS = {
    ItemKind.QUADRUPLE: gettext_noop("Keys: press 1 for S1-S2, 2 for S2-S1."),
    ItemKind.TRIPLE: gettext_noop("Keys: press 1 for S1, 2 for S2."),
    ItemKind.STYLE_OR_CONTENT: gettext_noop("Keys: press 1 for S1, 2 for S2."),
}

INTROS = {
    ItemKind.QUADRUPLE: gettext_noop(
        'In each question you see four sentences: two "anchor" sentences, A1 and A2, and two sentences S1 and '
        "S2. A1 and A2 say the same thing in two different styles. %(contrast)s S1 and S2 also "
        "say the same thing as each other (something different from A1 and A2), again in the two styles.\n\n"
        "Your task: match S1 and S2 to the anchors by style, ignoring what the sentences are about. Choose "
        '"S1-S2" if S1 has the style of A1 and S2 the style of A2, or "S2-S1" if S2 has the style of A1 and S1 '
        "the style of A2."),
    ItemKind.TRIPLE: gettext_noop(
        'In each question you see one "anchor" sentence A1 and two sentences S1 and S2. S1 and S2 say the same '
        "thing in two different styles. %(contrast)s\n\n"
        "Your task: choose the sentence, S1 or S2, that is closest in style to A1, ignoring what the sentences "
        "are about."),
    ItemKind.STYLE_OR_CONTENT: gettext_noop(
        'In each question you see one "anchor" sentence A1 and two sentences S1 and S2. One of S1 and S2 has '
        "the same style as A1 (but says something else); the other says what A1 says (but in a different "
        "style). %(contrast)s\n\n"
        "Your task: choose the sentence, S1 or S2, that has the same style as A1 — not the one that means the "
        "same."),
}


def _labels(component: StyleComponent) -> tuple[str, str]:
    """The component's two labels: a built-in component's translated when they are its built-in ones, a
    researcher's as written."""
    text = COMPONENT_TEXTS.get(component.name)
    if text is not None and (component.label_1, component.label_2) == text.labels:
        return gettext(text.labels[0]), gettext(text.labels[1])
    return component.label_1, component.label_2


def _contrast(components: list[StyleComponent]) -> str:
    """One sentence saying how the two styles differ."""
    parts = []
    for component in components:
        text = COMPONENT_TEXTS.get(component.name)
        l_1, l_2 = _labels(component)
        parts.append(gettext(text.contrast) if text else
                     gettext("whether a sentence is %(label_1)s or %(label_2)s") % {"label_1": l_1, "label_2": l_2})
    if len(parts) == 1:
        return gettext("The styles differ in %(contrast)s.") % {"contrast": parts[0]}
    return gettext("In each question the styles differ in one of these ways: %(ways)s.") % {
        "ways": gettext("; or ").join(parts)}


def _example(setup: str, component: StyleComponent) -> str:
    text = COMPONENT_TEXTS.get(component.name)
    if text is None:
        return ""
    (a_1, a_2), (s_1, s_2) = [(gettext(one), gettext(two)) for one, two in (text.anchors, text.sentences)]
    names = dict(zip(("label_1", "label_2"), _labels(component), strict=True))
    if setup == ItemKind.QUADRUPLE:
        lines = [f"A1: {a_1}", f"A2: {a_2}", f"S1: {s_2}", f"S2: {s_1}",
                 gettext("Answer: S2-S1 (S2 is %(label_1)s like A1, S1 is %(label_2)s like A2).") % names]
    elif setup == ItemKind.TRIPLE:
        lines = [f"A1: {a_1}", f"S1: {s_2}", f"S2: {s_1}", gettext("Answer: S2 (%(label_1)s, like A1).") % names]
    else:  # style or content: S1 says what A1 says in the other style; S2 says something else in A1's style
        lines = [f"A1: {a_1}", f"S1: {a_2}", f"S2: {s_1}",
                 gettext("Answer: S2 (%(label_1)s like A1, even though S1 says what A1 says).") % names]
    return "\n".join([*(f"  {line}" for line in lines[:-1]), lines[-1]])


def _heading(component: StyleComponent, count: int) -> str:
    if count == 1:
        return gettext("Example")
    text = COMPONENT_TEXTS.get(component.name)
    name = gettext(text.title) if text else component.name.replace("_", " ")
    return gettext("Example (%(component)s)") % {"component": name}


def task_description_compose(*, setup: str, components: list[StyleComponent], language: str = "en") -> str:
    """The instructions of an ordering study over these components (sorted by name) in this setup, in the study's
    `language` (a BCP 47 tag; its catalog, English where it has none)."""
    with translation.override(language):
        blocks = [gettext(INTROS[ItemKind(setup)]) % {"contrast": _contrast(components)}]
        examples = [(component, _example(setup, component)) for component in components]
        examples = [(component, text) for component, text in examples if text]
        for component, text in examples:
            blocks.append(f"{_heading(component, len(examples))}\n{text}")
        blocks.append(gettext(KEYS[ItemKind(setup)]))
    return "\n\n".join(blocks)
