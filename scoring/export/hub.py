"""The Hugging Face folder: `README.md` (the hub's YAML metadata, then the card), one Parquet file per config (style
component) and split, `croissant.json` and `card.json`. `datasets.load_dataset(folder, config)` reads it as it is."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from core.errors import ApplicationError
from scoring.error_codes import INVALID_OUT
from scoring.export.selection import SPLIT_RANK

ALL_CONFIG = "all"
HUB_MARKER = "croissant.json"  # a folder holding it was written here: it may be replaced by the next export
SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
                   (10_000_000, "1M<n<10M"))


def size_category(n: int) -> str:
    return next((label for limit, label in SIZE_CATEGORIES if n < limit), "10M<n<100M")


def hub_configs(files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The card's `configs`: one per component (its files per split), and `all` (every component) as the default
    where there are several."""
    by_config: dict[str, dict[str, list[str]]] = {}
    for f in files:
        by_config.setdefault(f["config"], {}).setdefault(f["split"], []).append(f["path"])
    configs = [{"config_name": name, "data_files": [{"split": split, "path": paths[0] if len(paths) == 1 else paths}
                                                    for split, paths in splits.items()]}
               for name, splits in by_config.items()]
    if len(configs) == 1:
        configs[0]["default"] = True
        return configs
    splits: dict[str, list[str]] = {}
    # The per-annotator votes table is a config of its own, never part of the instances' `all`.
    for f in sorted((f for f in files if not f.get("table")), key=lambda f: SPLIT_RANK[f["split"]]):
        splits.setdefault(f["split"], []).append(f["path"])
    name = ALL_CONFIG if ALL_CONFIG not in by_config else f"{ALL_CONFIG}_components"
    return [{"config_name": name, "default": True,
             "data_files": [{"split": split, "path": paths} for split, paths in splits.items()]}, *configs]


def hub_readme(*, card: dict[str, Any], markdown: str, files: list[dict[str, Any]], licence_ids: list[str]) -> str:
    """README.md: the hub's YAML front matter (huggingface_hub's DatasetCardData writes it) and the card."""
    # heavy: huggingface_hub loads only when the Hub is used
    from huggingface_hub import DatasetCardData

    languages = sorted({c["language"] for c in card["preprocessing"]["corpora"]}) or ["en"]
    extra: dict[str, Any] = {}
    if "other" in licence_ids:
        others = [f for f in card["licences"]["corpora"] if f["hub_id"] == "other"]
        extra["license_name"] = " + ".join(sorted({f["licence"] for f in others}))
        extra["license_link"] = "LICENSE" if not others[0]["url"] else others[0]["url"]
    data = DatasetCardData(
        license=licence_ids[0] if len(licence_ids) == 1 else licence_ids,
        language=languages,
        pretty_name=card["pretty_name"],
        size_categories=[size_category(card["counts"]["rows"])],
        task_categories=["sentence-similarity", "text-classification"],
        # The labels come with the corpora's construction ("found"); votes from people where they were annotated.
        annotations_creators=["found", *(["crowdsourced"] if card["counts"]["with_votes"] else [])],
        tags=["style", "stel", "style-representations", "stylecrowd"],
        configs=hub_configs(files),
        **extra,
    )
    return f"---\n{data.to_yaml()}\n---\n\n{markdown}"


def hub_folder_check(out: Path) -> None:
    """The folder may be new, empty, or one an earlier hub export wrote (it is replaced whole); anything else is
    refused, so that no stray file is published with the benchmark."""
    if out.exists() and not out.is_dir():
        raise ApplicationError(f"Out: {out} is a file; the hub format writes a folder", code=INVALID_OUT,
                               field="out")
    if out.is_dir() and any(out.iterdir()) and not (out / HUB_MARKER).is_file():
        raise ApplicationError(f"Out: {out} is a folder with other files in it; give a new or empty folder (or one "
                               "an earlier hub export wrote)", code=INVALID_OUT, field="out")


def hub_folder_replace(staging: Path, out: Path) -> None:
    """Move the finished folder into place; an earlier export's folder there goes away only now."""
    old = out.with_name(f".{out.name}.old")
    if old.exists():
        shutil.rmtree(old)
    if out.exists():
        out.rename(old)
    staging.rename(out)
    if old.exists():
        shutil.rmtree(old)
