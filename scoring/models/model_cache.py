"""Model outputs computed once: sentence embeddings and per-token log-probabilities, keyed by the model's identity
and the text's hash, shared by every process that reaches the database (a GPU worker on another machine too)."""
from __future__ import annotations

from django.db import models

__all__ = ["ModelCacheEntry", "ModelFingerprint"]


class ModelCacheEntry(models.Model):
    """One model output: a float32 vector (a sentence embedding, or a rewrite's token probabilities)."""

    namespace = models.CharField(
        max_length=200,
        help_text="What computed it: the output kind, precision and device, and the model directory's content "
                  "identity (ModelFingerprint.identity); a changed model directory is a new namespace.")
    text_hash = models.CharField(max_length=64, help_text="SHA-256 of the input text (UTF-8), hex.")
    vector = models.BinaryField(help_text="The output as little-endian float32 bytes.")
    nbytes = models.PositiveIntegerField(help_text="len(vector): the size the cache's bound counts.")
    created_at = models.DateTimeField(auto_now_add=True)
    used_at = models.DateTimeField(db_index=True, help_text="Last read or write (to the hour): the least recently "
                                                            "used entries go first when the cache is over its bound.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["namespace", "text_hash"], name="model_cache_one_per_text")]
        verbose_name = "model cache entry"
        verbose_name_plural = "model cache entries"

    def __str__(self) -> str:
        return f"{self.namespace[:40]}… {self.text_hash[:12]}"


class ModelFingerprint(models.Model):
    """The content identity of a model directory as seen from one path, remembered by the files' sizes and
    modification times so that the directory is hashed once per change, not once per run."""

    path = models.CharField(max_length=1000, unique=True, help_text="Absolute path of the model directory.")
    signature = models.CharField(max_length=64, help_text="Hash of every file's relative path, size and mtime.")
    identity = models.CharField(max_length=64, help_text="Hash of every file's relative path and content.")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.path} = {self.identity[:12]}"
