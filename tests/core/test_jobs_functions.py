"""Every background job has one shape: `<thing>_start` queues it, `<thing>_execute(*, job)` is its body, called by a
Celery task that takes ids (README, "How to add a job")."""
from __future__ import annotations

import inspect
from importlib import import_module

import pytest

# (module, the job's body): every job of the project.
JOB_FUNCTIONS = [
    ("tasks.services.uploads", "corpus_import_execute"),
    ("tasks.services.uploads", "instances_generate_execute"),
    ("annotation.services.writing_signals.jobs", "writing_signals_execute"),
    ("platforms.services.jobs", "platform_job_execute"),
    ("scoring.agreement.runs", "agreement_run_execute"),
    ("scoring.agreement.filtering", "filter_run_execute"),
    ("scoring.agreement.aggregation", "aggregation_execute"),
    ("scoring.export.jobs", "export_execute"),
    ("scoring.metric_evaluation.services", "metric_evaluation_execute"),
    ("scoring.model_annotators.runs", "model_run_execute"),
    ("scoring.model_scoring.runs", "score_run_execute"),
    ("core.erasure", "participant_erase_execute"),
    ("platforms.services.retention", "retention_apply_execute"),
]


@pytest.mark.parametrize(("module", "name"), JOB_FUNCTIONS)
def test_every_job_body_takes_its_job_row_alone(module: str, name: str) -> None:
    parameters = list(inspect.signature(getattr(import_module(module), name)).parameters.values())
    assert [(p.name, p.kind) for p in parameters] == [("job", inspect.Parameter.KEYWORD_ONLY)]


def test_the_list_is_every_job_body() -> None:
    """A new `<thing>_execute` in a services module must be listed above (and so take `(*, job)`)."""
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[2]
    found = set()
    for app in ("core", "tasks", "annotation", "platforms", "scoring"):
        for path in (root / app).rglob("*.py"):
            if "migrations" in path.parts or "celery_tasks" in path.parts:
                continue
            found |= {(".".join(path.relative_to(root).with_suffix("").parts), match)
                      for match in re.findall(r"^def (\w+_execute)\(", path.read_text("utf-8"), re.M)}
    assert found == set(JOB_FUNCTIONS)
