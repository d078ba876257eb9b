"""The model cache: sentence embeddings and token probabilities computed once per model and text (services.py)."""
