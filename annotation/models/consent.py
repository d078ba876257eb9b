"""What participants agreed to: each distinct consent text (the researcher's text and the statement generated from
the study's settings) stored once under its sha256, and the receipt code a session's participant can quote."""
from __future__ import annotations

import secrets

from django.db import models


def new_consent_receipt() -> str:
    """The code a participant quotes to withdraw or ask for erasure: random (it says nothing about the person), in
    the study codes' alphabet without look-alikes, grouped for reading aloud."""
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    code = "".join(secrets.choice(alphabet) for _ in range(10))
    return f"{code[:5]}-{code[5:]}"


class ConsentVersion(models.Model):
    """One consent text exactly as shown: sessions point at the version they agreed to, so an edit of a study's
    text makes a new version and leaves the earlier participants' version as it was."""

    sha256 = models.CharField(max_length=64, unique=True, help_text="sha256 of the full text (hex).")
    text = models.TextField(help_text="The researcher's text followed by the generated statement, as shown.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"consent {self.sha256[:12]}"
