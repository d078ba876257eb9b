"""The content-error test-set builder (Pauli et al. 2025): rule-based and model editors, the build, the review and
the rating study made from the accepted errors."""
