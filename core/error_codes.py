"""Error codes: the `code` of every error body (`{"error": {"code", "message", "details"}}`), named once.

Each app declares the codes it raises in its own `error_codes.py`; a code used by several apps is declared in the
lowest of them (core <- tasks <- annotation <- platforms <- scoring) and imported from there. A constant is the
plain string that goes on the wire (`NOT_FOUND == "not_found"`), named as its upper-case value, so a raise reads
`ApplicationError(..., code=NOT_FOUND)` and nothing a client sees depends on the constant. docs/errors.md is
generated from these declarations (`manage.py error_codes --write`); tests/core/test_error_codes.py fails when it is
stale or when a code is spelled as a string literal instead of a constant (scripts/codemod_error_codes.py replaces
them).
"""
from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

CODE_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class ErrorCode:
    value: str
    meaning: str
    module: str
    source: str = ""  # "DRF" for the codes Django REST framework's own exceptions carry


# value -> declaration, over every app's error_codes module that has been imported.
DECLARED: dict[str, ErrorCode] = {}


class ErrorCodes:
    """The codes one module declares: `NAME = codes.declare("name", "one-line meaning")`."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.codes: dict[str, ErrorCode] = {}

    def declare(self, value: str, meaning: str, *, source: str = "") -> str:
        if not CODE_PATTERN.match(value) or keyword.iskeyword(value.upper()):
            raise ValueError(f"{self.module}: error code {value!r} must be lower_snake_case")
        if not meaning.strip():
            raise ValueError(f"{self.module}: error code {value!r} needs a one-line meaning")
        earlier = DECLARED.get(value)
        if earlier is not None and earlier.module != self.module:
            raise ValueError(f"{self.module}: error code {value!r} is declared already in {earlier.module}")
        declared = ErrorCode(value=value, meaning=meaning.strip(), module=self.module, source=source)
        self.codes[value] = DECLARED[value] = declared
        return value


codes = ErrorCodes(__name__)

# Codes of Django REST framework's own exceptions, which core/api.py passes through (tests check DRF's values).
AUTHENTICATION_FAILED = codes.declare("authentication_failed", "The credentials sent are wrong.", source="DRF")
INVALID = codes.declare(
    "invalid", "Bad input: a value that is missing, malformed or out of range; `details` names the field "
    "(ApplicationError's default code).",
    source="DRF")
METHOD_NOT_ALLOWED = codes.declare("method_not_allowed", "The HTTP method is not allowed here.", source="DRF")
NOT_ACCEPTABLE = codes.declare("not_acceptable", "No representation matches the Accept header.", source="DRF")
NOT_AUTHENTICATED = codes.declare("not_authenticated", "The endpoint needs a logged-in user or a token.",
                                  source="DRF")
NOT_FOUND = codes.declare("not_found", "The thing named (study, session, record, path) does not exist here.",
                          source="DRF")
PARSE_ERROR = codes.declare("parse_error", "The body is not JSON, or is nested too deep.", source="DRF")
PERMISSION_DENIED = codes.declare("permission_denied", "The user lacks the permission this action needs.",
                                  source="DRF")
THROTTLED = codes.declare("throttled", "Too many requests; the Retry-After header says when to try again.",
                          source="DRF")
UNSUPPORTED_MEDIA_TYPE = codes.declare("unsupported_media_type", "The body is not application/json.", source="DRF")
ERROR = codes.declare("error", "Fallback for an error response that carries no code of its own.")

# Requests refused before a view runs (core/middleware.py).
BAD_REQUEST = codes.declare("bad_request", "The request itself is malformed (e.g. a Content-Length that is not a "
                            "non-negative number).")
LENGTH_REQUIRED = codes.declare("length_required", "A participant body was sent without Content-Length (chunked); "
                                "refused unread.")
LOGIN_LOCKED = codes.declare("login_locked", "Too many failed logins from this address; Retry-After says when to "
                             "try again.")
SERVER_ERROR = codes.declare("server_error", "An unexpected failure; the message carries no detail of it.")
TOO_LARGE = codes.declare("too_large", "The request body is larger than the participant limit.")
PATH_NOT_ALLOWED = codes.declare("path_not_allowed", "A server-side path lies outside the data folders this "
                                 "server reads from.")
URL_NOT_ALLOWED = codes.declare("url_not_allowed", "The server does not connect to that URL: it is not on the "
                                "allow-list (MODEL_ALLOWED_URLS, PLATFORM_ALLOWED_API_URLS), or it reaches a loopback "
                                "or private address that is not listed.")

# Model back-ends (core/model_backends/).
UNKNOWN_BACKEND = codes.declare("unknown_backend", "No model back-end of that name is registered.")
INVALID_BASE_URL = codes.declare("invalid_base_url", "A model endpoint's base URL is not an http(s) URL.")
MISSING_MODEL = codes.declare("missing_model", "No model name was given for an OpenAI-compatible endpoint.")
MODEL_ENDPOINT_AUTH = codes.declare("model_endpoint_auth", "The model endpoint refused the credentials (401/403).")
MODEL_ENDPOINT_TIMEOUT = codes.declare("model_endpoint_timeout", "The model endpoint did not answer within the "
                                       "time-out, after every retry.")
MODEL_ENDPOINT_UNREACHABLE = codes.declare("model_endpoint_unreachable", "The model endpoint could not be reached, "
                                           "after every retry.")
MODEL_ENDPOINT_RATE_LIMITED = codes.declare("model_endpoint_rate_limited", "The model endpoint answered 429 to every "
                                            "retry.")
MODEL_ENDPOINT_ERROR = codes.declare("model_endpoint_error", "The model endpoint answered 5xx to every retry.")
MODEL_NOT_FOUND = codes.declare("model_not_found", "The model is not served at the endpoint, or its local "
                                "directory does not exist.")
MODEL_REPLY_MALFORMED = codes.declare("model_reply_malformed", "The model endpoint answered something that is not "
                                      "a chat completion.")
MODEL_REQUEST_REFUSED = codes.declare("model_request_refused", "The model endpoint refused the request (another "
                                      "4xx).")
MISSING_MODEL_DIR = codes.declare("missing_model_dir", "No local model directory was given.")
INVALID_MODEL_DIR = codes.declare("invalid_model_dir", "The model directory is missing, or lacks config.json or "
                                  "tokenizer files.")
NOT_CAUSAL_LM = codes.declare("not_causal_lm", "The model directory does not hold a loadable causal language "
                              "model.")
INVALID_DEVICE = codes.declare("invalid_device", "The device is not auto, cpu or cuda, or cuda was asked for "
                               "without a GPU.")
EMPTY_CHOICE = codes.declare("empty_choice", "A choice's text has no tokens for the model's tokenizer.")

# Erasure on request (core/erasure.py).
NOTHING_TO_ERASE = codes.declare("nothing_to_erase", "No table and no media file holds data of this platform id: "
                                 "nothing was erased.")

# Developer checks.
ERROR_CODES_STALE = codes.declare("error_codes_stale", "manage.py error_codes --check: docs/errors.md is out of date, "
                                  "or a code is a string literal, undeclared, or declared and never raised.")
