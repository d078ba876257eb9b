"""Researchers' door to the tasks app, one module per part: corpora (with upload, pairs, generation, instances),
number-substitution candidates, screening questions."""
from tasks.admin import candidates, corpora, screening  # noqa: F401
