"""The one module that talks to Prolific's HTTP API (httpx). Nothing else in the project calls it directly.

Every call has a timeout. Calls that are safe to repeat (reads, and writes Prolific documents as idempotent or that
are idempotent in effect: a submission transition, bulk approval, participant-group membership) are retried after
a 429 (honouring Retry-After), a 5xx or a lost connection, with back-off. Every other call (creating a study,
publishing it, setting up or paying a bonus, asking for a return, sending a message) is made once: its failure is
reported with what is known of its effect (`PlatformCallError.outcome`) and never retried here.

The token is sent only in the Authorization header, only to the configured API origin (a pagination link to any
other host is refused), and never appears in a log line or an error message.
"""
from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
from django.conf import settings

from platforms.clients.errors import NOT_SENT, REFUSED, UNKNOWN, PlatformCallError
from platforms.error_codes import (
    PLATFORM_BAD_LINK,
    PLATFORM_BAD_PAGINATION,
    PLATFORM_FORBIDDEN,
    PLATFORM_NO_ANSWER,
    PLATFORM_NOT_FOUND,
    PLATFORM_RATE_LIMITED,
    PLATFORM_REFUSED,
    PLATFORM_SERVER_ERROR,
    PLATFORM_UNAUTHORIZED,
    PLATFORM_UNREACHABLE,
)

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 4  # for calls that are safe to repeat
PAGE_SIZE = 100
# Prolific recommends at most 1,000 ids per bulk approval and 200 per bonus set-up.
BULK_APPROVE_CHUNK = 1000
BONUS_SETUP_CHUNK = 200


def _retry_after(response: httpx.Response) -> float:
    value = response.headers.get("Retry-After", "")
    seconds: float
    try:
        seconds = float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        seconds = max(0.0, parsed.timestamp() - time.time()) if parsed else 1.0
    return min(max(seconds, 0.0), float(settings.PLATFORM_MAX_RETRY_AFTER_SECONDS))


def _detail(response: httpx.Response) -> str:
    """Prolific's own words for a refusal ({"error": {"title", "detail"}}), kept short."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        detail = error.get("detail")
        if isinstance(detail, dict):
            detail = "; ".join(f"{k}: {' '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in detail.items())
        elif isinstance(detail, list):
            detail = "; ".join(map(str, detail))
        return f"{error.get('title', '')}: {detail}".strip(": ")[:500]
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])[:500]
    return str(body)[:300]


def _answer(response: httpx.Response, what: str) -> Any:
    """A final (not retried) response: its decoded JSON body, or the refusal its 4xx status means."""
    if response.status_code == 401:
        raise PlatformCallError(
            f"Prolific refused the API token (401) while {what}: check the account's token.",
            outcome=REFUSED, code=PLATFORM_UNAUTHORIZED, status=400, platform_status=401)
    if response.status_code == 403:
        raise PlatformCallError(
            f"Prolific refused {what} (403: the token's user may not do this): {_detail(response)}",
            outcome=REFUSED, code=PLATFORM_FORBIDDEN, status=400, platform_status=403)
    if response.status_code == 404:
        raise PlatformCallError(f"Prolific does not know this resource (404) while {what}.",
                                outcome=REFUSED, code=PLATFORM_NOT_FOUND, status=404, platform_status=404)
    if response.status_code >= 400:
        raise PlatformCallError(f"Prolific refused {what} ({response.status_code}): {_detail(response)}",
                                outcome=REFUSED, code=PLATFORM_REFUSED, status=400,
                                platform_status=response.status_code, body=_safe_json(response))
    return _safe_json(response)


class ProlificClient:
    """Prolific's API for one account. `sleep` is injectable so tests need not wait out a Retry-After."""

    def __init__(self, *, token: str, base_url: str | None = None, timeout: float | None = None,
                 transport: httpx.BaseTransport | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.base_url = (base_url or settings.PROLIFIC_API_URL).rstrip("/") + "/"
        self._origin = urlsplit(self.base_url)[:2]
        timeout = float(timeout or settings.PLATFORM_HTTP_TIMEOUT_SECONDS)
        self._http = httpx.Client(
            base_url=self.base_url, transport=transport, follow_redirects=False,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            headers={"Authorization": f"Token {token}", "Accept": "application/json",
                     "User-Agent": "StyleCrowd (+https://github.com/stylecrowd)"})
        self._sleep = sleep

    def close(self) -> None:
        self._http.close()

    @staticmethod
    def _backoff(attempt: int) -> float:
        return min(float(settings.PLATFORM_RETRY_BACKOFF_SECONDS) * 2 ** (attempt - 1), 30.0)

    def __enter__(self) -> ProlificClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- the one request path --------------------------------------------------------------------------------

    def request(self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None,
                repeatable: bool, what: str) -> Any:
        """Send one call; `what` names it in errors ("creating the draft study"). Returns the decoded JSON body (None
        for an empty one)."""
        url = urljoin(self.base_url, path.lstrip("/")) if not path.startswith("http") else path
        if urlsplit(url)[:2] != self._origin:
            raise PlatformCallError(f"Prolific: refusing to send the token to {urlsplit(url).netloc} while "
                                    f"{what} (only {self._origin[1]} is the configured API).",
                                    outcome=NOT_SENT, code=PLATFORM_BAD_LINK)
        attempts = MAX_ATTEMPTS if repeatable else 1
        for attempt in range(1, attempts + 1):
            last = attempt == attempts
            try:
                response = self._http.request(method, url, json=json, params=params)
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
                logger.warning("prolific %s %s: not connected (%s), attempt %s", method, urlsplit(url).path,
                               type(exc).__name__, attempt)
                if last:
                    raise PlatformCallError(
                        f"Prolific could not be reached while {what} ({type(exc).__name__}); nothing was sent.",
                        outcome=NOT_SENT, code=PLATFORM_UNREACHABLE, status=503) from None
                self._sleep(self._backoff(attempt))
                continue
            except httpx.TransportError as exc:  # read/write timeout, reset, protocol error: after sending
                logger.warning("prolific %s %s: no answer (%s), attempt %s", method, urlsplit(url).path,
                               type(exc).__name__, attempt)
                if last:
                    raise PlatformCallError(
                        f"Prolific did not answer while {what} ({type(exc).__name__}); the request may have been "
                        "carried out.", outcome=UNKNOWN,
                        code=PLATFORM_NO_ANSWER, status=504) from None
                self._sleep(self._backoff(attempt))
                continue
            logger.info("prolific %s %s -> %s", method, urlsplit(url).path, response.status_code)
            if response.status_code == 429:
                wait = _retry_after(response)
                if last:
                    raise PlatformCallError(
                        f"Prolific is rate-limiting requests (429) while {what}; nothing was done. Try again in "
                        f"{wait:.0f} s.", outcome=REFUSED, code=PLATFORM_RATE_LIMITED, status=503,
                        platform_status=429, retry_after=wait)
                self._sleep(wait)
                continue
            if response.status_code >= 500:
                if last:
                    raise PlatformCallError(
                        f"Prolific answered {response.status_code} while {what}; the request may or may not have "
                        "been carried out.", outcome=UNKNOWN, code=PLATFORM_SERVER_ERROR,
                        platform_status=response.status_code)
                self._sleep(self._backoff(attempt))
                continue
            return _answer(response, what)
        raise AssertionError("unreachable")  # pragma: no cover

    # --- reads ---------------------------------------------------------------------------------------------

    def me(self) -> dict[str, Any]:
        return self.request("GET", "/api/v1/users/me/", repeatable=True, what="checking the token")

    def workspaces(self) -> list[dict[str, Any]]:
        return (self.request("GET", "/api/v1/workspaces/", repeatable=True, what="listing workspaces") or {}).get(
            "results") or []

    def study_get(self, study_id: str) -> dict[str, Any]:
        return self.request("GET", f"/api/v1/studies/{study_id}/", repeatable=True, what=f"reading study {study_id}")

    def studies_list(self, project_id: str = "") -> Iterator[dict[str, Any]]:
        path = f"/api/v1/projects/{project_id}/studies/" if project_id else "/api/v1/studies/"
        yield from self._pages(path, {}, what="listing studies")

    def submissions_list(self, study_id: str) -> Iterator[dict[str, Any]]:
        """Every submission of the study, following `_links.next` to the last page."""
        yield from self._pages("/api/v1/submissions/", {"study": study_id}, what=f"listing submissions of {study_id}")

    def submission_get(self, submission_id: str) -> dict[str, Any]:
        return self.request("GET", f"/api/v1/submissions/{submission_id}/", repeatable=True,
                            what=f"reading submission {submission_id}")

    def submission_demographics(self, submission_id: str) -> dict[str, Any] | None:
        """The participant's demographics as archived when the submission was completed (a snapshot; an unanswered
        question reads "DATA_EXPIRED"), or None when Prolific archived none (its 404). Only some workspaces have
        this endpoint; a refusal (403) is an error like any other."""
        try:
            body = self.request("GET", f"/api/v1/submissions/{submission_id}/demographics/", repeatable=True,
                                what=f"reading the demographics of submission {submission_id}")
        except PlatformCallError as exc:
            if exc.platform_status == 404:  # noqa: PLR2004 - none archived: nothing to read
                return None
            raise
        demographics = (body or {}).get("demographics") if isinstance(body, dict) else None
        return demographics if isinstance(demographics, dict) else None

    def filters_list(self, workspace_id: str = "") -> list[dict[str, Any]]:
        """Prolific's filters (`GET /api/v1/filters/`): select filters carry `filter_id`, `title` and `choices`."""
        params = {"workspace_id": workspace_id} if workspace_id else None
        body = self.request("GET", "/api/v1/filters/", params=params, repeatable=True, what="listing the filters")
        return [row for row in (body or {}).get("results") or [] if isinstance(row, dict)]

    def _pages(self, path: str, params: dict[str, Any], *, what: str) -> Iterator[dict[str, Any]]:
        page: str | None = path
        query: dict[str, Any] | None = {**params, "page": 1, "page_size": PAGE_SIZE}
        seen: set[str] = set()
        while page:
            body = self.request("GET", page, params=query, repeatable=True, what=what) or {}
            yield from body.get("results") or []
            links = body.get("_links") or {}
            nxt = (links.get("next") or {}).get("href") if isinstance(links.get("next"), dict) else links.get("next")
            if nxt and nxt in seen:
                raise PlatformCallError(f"Prolific's pagination repeats a page while {what}.", outcome=REFUSED,
                                        code=PLATFORM_BAD_PAGINATION)
            if nxt:
                seen.add(nxt)
            page, query = nxt, None  # the next link carries its own query

    # --- studies -------------------------------------------------------------------------------------------

    def study_create(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", "/api/v1/studies/", json=body, repeatable=False, what="creating the draft study")

    def study_transition(self, study_id: str, action: str) -> dict[str, Any]:
        return self.request("POST", f"/api/v1/studies/{study_id}/transition/", json={"action": action},
                            repeatable=False, what=f"{action.lower()}ing study {study_id}")

    # --- pre-flight: what publishing would cost, who could take part, a test participant's run ---------------------

    def study_cost(self, *, reward_cents: int, places: int) -> dict[str, Any]:
        """Prolific's own calculator: the total in cents of the account's currency, fees and VAT included."""
        return self.request("POST", "/api/v1/study-cost-calculator/",
                            json={"reward": float(reward_cents), "total_available_places": float(places)},
                            repeatable=True, what="calculating the study's cost")

    def eligible_count(self, *, filters: list[dict[str, Any]], workspace_id: str = "") -> dict[str, Any]:
        """How many participants pass every filter (0: fewer than 25, which Prolific does not show)."""
        body: dict[str, Any] = {"filters": filters}
        if workspace_id:
            body["workspace_id"] = workspace_id
        return self.request("POST", "/api/v1/eligibility-count/", json=body, repeatable=True,
                            what="counting the eligible participants")

    def test_participant_create(self, email: str) -> dict[str, Any]:
        return self.request("POST", "/api/v1/researchers/participants/", json={"email": email}, repeatable=False,
                            what="creating a test participant")

    def test_study_create(self, study_id: str) -> dict[str, Any]:
        """A test study from the draft, published to the workspace's test participants only."""
        return self.request("POST", f"/api/v1/studies/{study_id}/test-study", repeatable=False,
                            what=f"creating a test study from draft {study_id}")

    # --- decisions -----------------------------------------------------------------------------------------

    def bulk_approve(self, study_id: str, submission_ids: list[str]) -> Any:
        return self.request("POST", "/api/v1/submissions/bulk-approve/", json={"submission_ids": submission_ids},
                            repeatable=True, what=f"approving {len(submission_ids)} submissions")

    def reject(self, submission_id: str, *, category: str, message: str) -> dict[str, Any]:
        body = {"action": "REJECT", "rejection_category": category, "message": message}
        return self.request("POST", f"/api/v1/submissions/{submission_id}/transition/", json=body, repeatable=True,
                            what=f"rejecting submission {submission_id}")

    def screen_out(self, submission_id: str, *, completion_code: str) -> dict[str, Any]:
        body = {"action": "SCREEN_OUT", "completion_code": completion_code}
        return self.request("POST", f"/api/v1/submissions/{submission_id}/transition/", json=body, repeatable=True,
                            what=f"screening out submission {submission_id}")

    def request_return(self, submission_id: str, reasons: list[str]) -> dict[str, Any]:
        return self.request("POST", f"/api/v1/submissions/{submission_id}/request-return/",
                            json={"request_return_reasons": reasons}, repeatable=False,
                            what=f"asking submission {submission_id} to be returned")

    # --- bonuses (never repeated) ---------------------------------------------------------------------------

    def bonus_setup(self, study_id: str, csv_bonuses: str) -> dict[str, Any]:
        return self.request("POST", "/api/v1/submissions/bonus-payments/",
                            json={"study_id": study_id, "csv_bonuses": csv_bonuses}, repeatable=False,
                            what="setting up the bonus payments")

    def bonus_pay(self, bulk_id: str) -> Any:
        return self.request("POST", f"/api/v1/bulk-bonus-payments/{bulk_id}/pay/", repeatable=False,
                            what=f"paying bulk bonus {bulk_id}")

    # --- messages, groups, hooks ------------------------------------------------------------------------------

    def message_bulk(self, study_id: str, participant_ids: list[str], body: str) -> Any:
        return self.request("POST", "/api/v1/messages/bulk/",
                            json={"ids": participant_ids, "body": body, "study_id": study_id}, repeatable=False,
                            what=f"messaging {len(participant_ids)} participants")

    def group_create(self, *, workspace_id: str, name: str, description: str,
                     participant_ids: list[str]) -> dict[str, Any]:
        body = {"workspace_id": workspace_id, "name": name, "description": description,
                "participant_ids": participant_ids}
        return self.request("POST", "/api/v1/participant-groups/", json=body, repeatable=False,
                            what=f"creating participant group {name!r}")

    def group_members(self, group_id: str) -> list[str]:
        body = self.request("GET", f"/api/v1/participant-groups/{group_id}/participants/", repeatable=True,
                            what=f"reading participant group {group_id}") or {}
        return [row.get("participant_id") for row in body.get("results") or [] if row.get("participant_id")]

    def group_add(self, group_id: str, participant_ids: list[str]) -> Any:
        return self.request("POST", f"/api/v1/participant-groups/{group_id}/participants/",
                            json={"participant_ids": participant_ids}, repeatable=True,
                            what=f"adding {len(participant_ids)} participants to group {group_id}")

    def group_remove(self, group_id: str, participant_ids: list[str]) -> Any:
        return self.request("DELETE", f"/api/v1/participant-groups/{group_id}/participants/",
                            json={"participant_ids": participant_ids}, repeatable=True,
                            what=f"removing {len(participant_ids)} participants from group {group_id}")

    def hook_secret_create(self, workspace_id: str) -> dict[str, Any]:
        return self.request("POST", "/api/v1/hooks/secrets/", json={"workspace_id": workspace_id}, repeatable=False,
                            what="creating the webhook secret")

    def hook_subscribe(self, *, workspace_id: str, event_type: str, target_url: str) -> tuple[dict[str, Any], str]:
        """Create the subscription; returns its body and the X-Hook-Secret to confirm it with."""
        body = {"workspace_id": workspace_id, "event_type": event_type, "target_url": target_url}
        response = self._raw("POST", "/api/v1/hooks/subscriptions/", json=body, what="subscribing to events")
        return _safe_json(response) or {}, response.headers.get("X-Hook-Secret", "")

    def hook_confirm(self, subscription_id: str, hook_secret: str) -> dict[str, Any]:
        return self.request("POST", f"/api/v1/hooks/subscriptions/{subscription_id}/", json={"secret": hook_secret},
                            repeatable=True, what="confirming the event subscription")

    def _raw(self, method: str, path: str, *, json: Any, what: str) -> httpx.Response:
        """One unrepeated call whose headers the caller needs (the subscription's X-Hook-Secret)."""
        holder: dict[str, httpx.Response] = {}

        def keep(response: httpx.Response) -> None:
            holder["response"] = response

        self._http.event_hooks["response"].append(keep)
        try:
            self.request(method, path, json=json, repeatable=False, what=what)
        finally:
            self._http.event_hooks["response"].remove(keep)
        return holder["response"]


def _safe_json(response: httpx.Response) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return response.text
