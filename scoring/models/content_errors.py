"""The content-error test set (Pauli et al. 2025): good rewrites paired with generated rewrites that keep the style
but break the content, reviewed by the researcher before a rating study shows them to raters."""
from __future__ import annotations

from django.db import models

__all__ = ["ContentError", "ContentErrorSet"]


class ContentErrorSet(models.Model):
    """One run of the builder: where the pairs came from, the seed, the editor, the counts."""

    name = models.SlugField(max_length=80, unique=True)
    source = models.TextField(help_text="The pairs file's path, or corpus:NAME.")
    error_types = models.JSONField(default=list, help_text="Error types asked for (substitution, deletion, …).")
    generator = models.CharField(max_length=300, default="rules", help_text="'rules' or the local model's path.")
    seed = models.BigIntegerField(default=0)
    summary = models.JSONField(default=dict, blank=True, help_text="Counts per type, skipped pairs and why.")
    study = models.ForeignKey("annotation.Study", on_delete=models.SET_NULL, null=True, blank=True,
                              related_name="+", help_text="The rating study made from the accepted errors.")
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name


class ContentError(models.Model):
    """One (source, good rewrite, rewrite with a content error) triple and the edit that made the error."""

    class ErrorType(models.TextChoices):
        SUBSTITUTION = "substitution", "substitution"
        DELETION = "deletion", "deletion"
        FABRICATION = "fabrication", "fabrication"

    class Review(models.TextChoices):
        PENDING = "pending", "pending review"
        ACCEPTED = "accepted", "accepted"
        REJECTED = "rejected", "rejected"

    error_set = models.ForeignKey(ContentErrorSet, on_delete=models.CASCADE, related_name="errors")
    pair_id = models.CharField(max_length=255, help_text="The pair's id in the source file or corpus.")
    source = models.TextField()
    rewrite = models.TextField(help_text="The good rewrite (style changed, content kept).")
    erroneous = models.TextField(help_text="The rewrite with the content error.")
    target_style = models.CharField(max_length=64, blank=True, default="")
    error_type = models.CharField(max_length=16, choices=ErrorType.choices)
    rule = models.CharField(max_length=300, help_text="The editor: number, date, name, noun, phrase, … or model:NAME.")
    edit = models.JSONField(help_text='{"start", "end", "before", "after"}: rewrite[start:end] == before → after.')
    review = models.CharField(max_length=10, choices=Review.choices, default=Review.PENDING, db_index=True)
    reviewed_by = models.CharField(max_length=150, blank=True, default="")
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["error_set", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["error_set", "pair_id", "error_type"], name="content_error_unique"),
            models.CheckConstraint(condition=~models.Q(erroneous=models.F("rewrite")),
                                   name="content_error_changes_rewrite"),
        ]

    def __str__(self) -> str:
        return f"{self.error_set_id}:{self.pair_id}:{self.error_type}"
