"""STEL's decision rule lives in `tasks.stel.decision` (the lowest layer that needs it: the leak detector in `tasks`
scores surface features with it); re-exported here for the scoring modules that import it from this path."""
from tasks.stel.decision import (  # noqa: F401
    S1_S2,
    S2_S1,
    TIE_TOLERANCE,
    UNDECIDED,
    accuracy_stel,
    accuracy_with_undecided,
    predictions_decide,
    predictions_force,
)
