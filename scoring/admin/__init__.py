"""Scoring admin, one module per part.

`django.setup()` imports every admin module (the admin's autodiscovery), so every process (a command, a worker, a
test) pays for what these modules import at their top. The services that load pandas, pyarrow, scipy, krippendorff or
sacrebleu are imported inside the views and displays that call them (`# heavy: ... (not at set-up)`);
`tests/core/test_apps.py` fails when `django.setup()` imports one of those libraries again."""
from . import (  # noqa: F401
    agreement,
    content_errors,
    export,
    job_links,
    metric_evaluation,
    model_annotators,
    model_scoring,
    overview,
)
