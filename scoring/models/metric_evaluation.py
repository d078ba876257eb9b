"""Meta-evaluations of automatic metrics against human Likert ratings (evaluate_metrics)."""
