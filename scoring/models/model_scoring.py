"""Model scoring runs on STEL benchmarks (score_stel)."""
