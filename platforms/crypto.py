"""Platform secrets at rest: API tokens and webhook secrets are stored encrypted (Fernet, from `cryptography`) with a
key that lives only in the environment (STYLECROWD_ENCRYPTION_KEY), so a database dump or an export never holds a
usable token. Nothing here ever logs or returns a secret in an error message."""
from __future__ import annotations

from django.conf import settings

from core.errors import ApplicationError
from platforms.error_codes import ENCRYPTION_KEY_INVALID, ENCRYPTION_KEY_MISSING, SECRET_UNDECRYPTABLE


def _fernet():  # noqa: ANN202 - cryptography's Fernet, imported where used
    # heavy: cryptography loads only when a secret is sealed or opened
    from cryptography.fernet import Fernet

    key = settings.STYLECROWD_ENCRYPTION_KEY
    if not key:
        raise ApplicationError(
            "Token: storing a platform secret needs STYLECROWD_ENCRYPTION_KEY in the environment (a Fernet key: "
            "python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'), or give "
            "the name of an environment variable that holds the token instead (token_env).",
            code=ENCRYPTION_KEY_MISSING, field="token")
    try:
        return Fernet(key.encode() if isinstance(key, str) else key)
    except (ValueError, TypeError):
        raise ApplicationError("STYLECROWD_ENCRYPTION_KEY is not a valid Fernet key (32 url-safe base64 bytes).",
                               code=ENCRYPTION_KEY_INVALID, status=500) from None


def secret_encrypt(value: str) -> str:
    return _fernet().encrypt(value.encode()).decode()


def secret_decrypt(token: str) -> str:
    # heavy: cryptography loads only when a secret is sealed or opened
    from cryptography.fernet import InvalidToken

    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise ApplicationError(
            "A stored platform secret cannot be decrypted with STYLECROWD_ENCRYPTION_KEY (was the key changed?). "
            "Enter the token again on the account.", code=SECRET_UNDECRYPTABLE, status=500) from None
