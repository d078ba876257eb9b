"""Scoring style-similarity methods on STEL-format benchmarks (STEL §5).

`methods` holds the one interface every method implements and the registry that turns a spec such as
`char3gram`, `st:minilm`, `hf:/path/to/model` or `mypkg.mymod.MyMethod` into an instance; `benchmark_io` reads
STEL TSVs; `decision` is STEL's decision rule; `evaluation` turns predictions into accuracies and McNemar tests;
`services` is the one entry point the CLI, the admin and the Celery task share.
"""
