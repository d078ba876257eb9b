"""The names an export's rows and tables go by: its fields, the per-annotator votes table's name and the instance
statuses an export selects. A module of names only (no pandas, no pyarrow), so that reading a benchmark for
`score_stel` (`scoring/model_scoring/benchmark_io.py`) and the admin's forms do not load the libraries that write
the files; `scoring/export/formats.py`, `scoring/export/annotator_votes.py` and `scoring/export/selection.py`
re-export them."""
from __future__ import annotations

# The fields of a row with its texts, in STEL's column order (tasks.stel.tsv.COLUMNS), and the four texts among them.
PLAIN_FIELDS = ["anchor_1", "anchor_2", "alternative_1_1", "alternative_1_2", "correct_alternative", "id", "votes",
                "style_type"]
TEXT_FIELDS = ["anchor_1", "anchor_2", "alternative_1_1", "alternative_1_2"]
# The fields of an ids-only row: where the texts come from and a digest to check them by, no texts.
IDS_FIELDS = ["id", "corpus", "setup", "style_type", "anchor_pair", "sentence_pair", "anchor_1_style",
              "sentence_1_style", "correct_alternative", "votes", "text_sha256"]
# The per-annotator votes table (a config of its own in a hub folder, a file beside the data file otherwise).
VOTES_TABLE = "annotator_votes"
# The instance statuses an export selects ("all": every status).
STATUSES = ("candidate", "validated", "rejected", "all")
