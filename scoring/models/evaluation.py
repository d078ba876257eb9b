"""Model scoring runs and metric meta-evaluations (issue: scoring models and metrics)."""
