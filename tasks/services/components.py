"""Style components created from the CLI and the API, so that any STEL characteristic file can be imported."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import IntegrityError, transaction

from core.errors import ApplicationError
from tasks.error_codes import COMPONENT_EXISTS, INVALID_COMPONENT
from tasks.models import StyleComponent

_SLUG = re.compile(r"^[-a-zA-Z0-9_]+$")


@dataclass(frozen=True)
class ComponentSpec:
    """What `import_corpus --create-component` knows about a component that does not exist yet."""

    description: str = ""
    labels: tuple[str, str] | None = None  # None: from the STEL IDs' style tags, else style_1/style_2
    kind: str = StyleComponent.Kind.CHARACTERISTIC


def component_build(*, name: str, label_1: str, label_2: str, kind: str, description: str = "") -> StyleComponent:
    """A validated, unsaved component (the caller saves it in the transaction that uses it)."""
    name, label_1, label_2 = name.strip(), label_1.strip(), label_2.strip()
    if not name or not _SLUG.match(name) or len(name) > 64:
        raise ApplicationError(f"component name {name!r}: use 1–64 letters, digits, '-' or '_' (STEL's style type)",
                               code=INVALID_COMPONENT)
    if not label_1 or not label_2 or label_1 == label_2 or max(len(label_1), len(label_2)) > 64:
        raise ApplicationError(f"component {name!r}: two different, non-empty labels of at most 64 characters are "
                               f"needed (got {label_1!r} and {label_2!r})", code=INVALID_COMPONENT)
    if kind not in StyleComponent.Kind.values:
        raise ApplicationError(f"component kind {kind!r}: one of {', '.join(StyleComponent.Kind.values)}",
                               code=INVALID_COMPONENT)
    if StyleComponent.objects.filter(name=name).exists():
        raise ApplicationError(f"component {name!r} exists already", code=COMPONENT_EXISTS, status=409)
    return StyleComponent(name=name, label_1=label_1, label_2=label_2, kind=kind, description=description.strip())


def component_save(*, component: StyleComponent) -> StyleComponent:
    """Save a built component; a concurrent creation of the same name is a 409, not a crash."""
    try:
        with transaction.atomic():
            component.save()
    except IntegrityError:
        raise ApplicationError(f"component {component.name!r} exists already", code=COMPONENT_EXISTS,
                               status=409) from None
    return component


def component_create(*, name: str, label_1: str, label_2: str, kind: str = StyleComponent.Kind.CHARACTERISTIC,
                     description: str = "") -> StyleComponent:
    return component_save(component=component_build(name=name, label_1=label_1, label_2=label_2, kind=kind,
                                                    description=description))


def labels_from_stel_ids(stel_ids: Sequence[str]) -> tuple[str, str] | None:
    """The two style tags of STEL IDs (`QQ_ction-0-wiki-0_wiki-73-ction-73`: ction, wiki), in first-seen order."""
    tags: list[str] = []
    for stel_id in stel_ids:
        parts = stel_id.split("_")
        if len(parts) < 3:
            continue
        for token in parts[1].split("-") + parts[2].split("-"):
            if token and not token.isdigit() and token not in tags:
                tags.append(token)
        if len(tags) >= 2:
            return tags[0], tags[1]
    return None
