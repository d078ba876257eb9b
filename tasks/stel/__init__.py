"""The rules that define the benchmark, each written once, in the lowest layer that needs it (`tasks` is below every
other app, so `annotation`, `platforms` and `scoring` all import from here; nothing here touches the database):

- `decision`: STEL's decision rule for a style-similarity method (quadruple and triple forms), its tie tolerance,
  and STEL's accuracy with undecided instances counted as 0.5;
- `majority`: the m-of-k rule that validates a task instance from the crowd's answers (when an item is decided,
  when no further answer can change it, STEL's surplus-vote rule, the default m);
- `tsv`: STEL's TSV format (its header, one reader, one writer), the format of STEL's published files and of
  StyleCrowd's exports.

Tests against STEL's own published files: tests/tasks/test_stel_rules.py.
"""
