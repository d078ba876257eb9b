"""A study's overview page (its home in the admin): the reads (`overview/selectors.py`), the registry of sections
the apps above annotation add (`overview/sections.py`) and the arrivals plot (`overview/plot.py`)."""
from annotation.overview.sections import (
    OVERVIEW_SECTIONS,
    PIPELINE,
    Figure,
    Notice,
    OverviewPart,
    Step,
    next_step,
    overview_parts,
    overview_section_register,
)

__all__ = ["OVERVIEW_SECTIONS", "PIPELINE", "Figure", "Notice", "OverviewPart", "Step", "next_step",
           "overview_parts", "overview_section_register"]
