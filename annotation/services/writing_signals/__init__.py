"""Writing signals of rewrites: is the crowd's writing human? Per rewrite, from its writing telemetry
(services/telemetry.py) and its text: mostly pasted, typed faster than people sustain, a long time away from the
page before a large insertion, inconsistent telemetry, a near-duplicate of another writer's rewrite of the same
source, LLM-likeness under a local language model, similarity to a model's own rewrite. Each has its evidence and a
researcher-set threshold; they flag rewrites for review and never reject one unless the researcher's rule says so
(`review.review_autoflag`).

- `registry`: the signals' definitions, units, default thresholds (one home).
- `measures`: the measurements, without database access.
- `language_model`: the LLM-likeness statistic (transformers, a local model).
- `model_rewrite`: the model's own rewrite of each source, asked of an OpenAI-compatible endpoint (model similarity).
- `services`: compute and store a study's signals; read them (queue, recommendations, dataset card).
- `jobs`: `writing_signals_start`/`_execute` (Celery `annotation.writing_signals`) and the periodic refresh.
"""
