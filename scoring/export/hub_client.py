"""The one client of a dataset hub (the Hugging Face hub, through huggingface_hub): nothing else in the project talks
to it. Every call has a timeout (STYLECROWD_HUB_TIMEOUT_SECONDS); the hub's answers become ApplicationErrors.

The endpoint is read when a call is made (HF_ENDPOINT, as huggingface_hub reads it; default the public hub), and
the token only from the environment (HF_TOKEN): never from a cached login, so that what publishes is explicit.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from core.errors import ApplicationError
from scoring.error_codes import (
    HUB_ERROR,
    HUB_OUTCOME_UNKNOWN,
    HUB_RATE_LIMITED,
    HUB_UNAUTHORIZED,
    HUB_UNREACHABLE,
    MISSING_TOKEN,
)

DEFAULT_ENDPOINT = "https://huggingface.co"
TOKEN_VARIABLES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")


class HubOutcomeUnknown(ApplicationError):
    """The hub did not answer a call that may have changed the repository: a person checks before trying again."""


@dataclass(frozen=True)
class HubCommit:
    url: str
    oid: str
    repo_url: str


def hub_endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def hub_token() -> str:
    token = next((os.environ[name].strip() for name in TOKEN_VARIABLES if os.environ.get(name, "").strip()), "")
    if not token:
        raise ApplicationError("No Hugging Face token: set HF_TOKEN in the environment (a token with write access to "
                               "the repository's owner) and run again; nothing was uploaded.", code=MISSING_TOKEN,
                               status=400)
    return token


def _timeouts() -> None:
    """Every request huggingface_hub makes gets the timeout (its own default client waits forever)."""
    # heavy: huggingface_hub's HTTP stack loads only when the Hub is used
    import httpx2

    # heavy: huggingface_hub loads only when the Hub is used
    from huggingface_hub.utils import set_client_factory
    from huggingface_hub.utils._http import default_client_factory

    seconds = float(settings.STYLECROWD_HUB_TIMEOUT_SECONDS)

    def factory() -> httpx2.Client:
        client = default_client_factory()
        client.timeout = httpx2.Timeout(seconds)
        return client

    set_client_factory(factory)


@contextmanager
def _online() -> Iterator[None]:
    """This process may be in huggingface_hub's offline mode (model loading sets HF_HUB_OFFLINE so that no weights are
    ever downloaded); an upload the researcher asked for is the one call let through, for its duration."""
    # heavy: huggingface_hub loads only when the Hub is used
    from huggingface_hub import constants

    before = constants.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = False
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = before


def _http_error(exc: Exception, *, during: str) -> ApplicationError:
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if status in (401, 403):
        return ApplicationError(f"The hub refused the token while {during} (HTTP {status}): it needs write access to "
                                "the repository's owner.", code=HUB_UNAUTHORIZED, status=403)
    if status == 429:
        return ApplicationError(f"The hub is rate-limiting ({during}, HTTP 429): try again later.",
                                code=HUB_RATE_LIMITED, status=503)
    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return ApplicationError(f"The hub answered an error while {during}: {message}", code=HUB_ERROR, status=502)


def hub_upload_folder(*, folder: Path, repo: str, token: str, private: bool, message: str) -> HubCommit:
    """Create the dataset repository if needed and upload the folder as one commit."""
    # heavy: huggingface_hub loads only when the Hub is used
    from huggingface_hub import HfApi

    _timeouts()
    api = HfApi(endpoint=hub_endpoint(), token=token, library_name="stylecrowd")
    with _online():
        return _upload(api=api, folder=folder, repo=repo, private=private, message=message)


def _upload(*, api: Any, folder: Path, repo: str, private: bool, message: str) -> HubCommit:
    # heavy: huggingface_hub's HTTP stack loads only when the Hub is used
    import httpx2

    # heavy: huggingface_hub loads only when the Hub is used
    from huggingface_hub.errors import HfHubHTTPError

    try:
        repo_url = api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
    except HfHubHTTPError as exc:
        raise _http_error(exc, during=f"creating {repo}") from exc
    except (httpx2.TimeoutException, httpx2.NetworkError) as exc:
        raise ApplicationError(f"The hub did not answer while creating {repo} ({type(exc).__name__}); nothing was "
                               "uploaded. Try again later.", code=HUB_UNREACHABLE, status=503) from exc
    try:
        commit = api.upload_folder(folder_path=str(folder), repo_id=repo, repo_type="dataset",
                                   commit_message=message)
    except HfHubHTTPError as exc:
        raise _http_error(exc, during=f"uploading to {repo}") from exc
    except (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError) as exc:
        raise HubOutcomeUnknown(
            f"The hub did not answer while uploading to {repo} ({type(exc).__name__}): the commit may or may not have "
            "been made. Look at the repository before publishing again.", code=HUB_OUTCOME_UNKNOWN,
            status=504) from exc
    return HubCommit(url=str(commit.commit_url), oid=str(commit.oid), repo_url=str(repo_url))
