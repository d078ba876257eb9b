"""What every card section reads: the exported rows and the records they came from, loaded once."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from annotation.models import Study
from scoring.models import FilterRun
from tasks.models import Corpus


@dataclass
class CardContext:
    frame: pd.DataFrame  # the exported rows (scoring.export.selection.benchmark_frame)
    fmt: str
    ids_only: bool
    name: str
    version: str
    changelog: dict[str, Any]
    params: dict[str, Any]  # the selection and format, as the command that reproduces the export takes them
    studies: list[Study]  # the studies whose annotations gave the votes
    filter_run: FilterRun | None
    corpora: list[Corpus]
    files: list[dict[str, Any]]  # every written data file: path (relative), sha256, bytes, rows, config, split
    command: str
    created_at: str
    licences: list[dict[str, Any]] = field(default_factory=list)  # scoring.export.licences.export_licences
    annotator_votes: dict[str, Any] = field(default_factory=dict)  # scoring.export.annotator_votes.votes_frame
