"""Model annotators: language models answer a study's items beside the crowd and are measured as the crowd is.

- `prompts.py`: each item as a participant saw it (the study's instructions, its practice examples, the item's
  texts, question and choices), in every order of display;
- `runs.py`: `model_run_start` / `model_run_execute` (`model_run_compute`) / `model_run_stop` (a Celery job:
  concurrency, retries, cache, token and cost counts, a stop button);
- `selectors.py`: the model answers as frames, and each item's verdict across orders;
- `comparison.py`: the statistics on the agreement dashboard and in the dataset card;
- `guidance.py`: a run as the guide of an adaptive study's early stopping;
- `api.py`, `urls.py`: the REST door. The back-ends themselves are `core.model_backends`.
"""
