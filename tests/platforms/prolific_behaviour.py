"""Prolific's behaviour for the fake (`tests/platforms/fake_prolific.py`): what each route of Prolific's API does to
the fake's state and answers, one small handler per route, found through one dispatch table."""
from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

Answer = tuple[int, Any, dict[str, str]]


def hexid() -> str:
    return secrets.token_hex(12)


def now_iso() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


class ProlificBehaviour:
    """The routes; the state (`studies`, `submissions`, …) lives on the FakeProlific that inherits this."""

    studies: dict[str, dict[str, Any]]
    submissions: dict[str, dict[str, Any]]
    demographics: dict[str, dict[str, Any]]  # submission id -> the archived snapshot; absent: none archived (404)
    bulk_bonuses: dict[str, dict[str, Any]]
    payments: list[dict[str, Any]]
    groups: dict[str, dict[str, Any]]
    messages: list[dict[str, Any]]
    subscriptions: dict[str, dict[str, Any]]
    secrets: dict[str, str]
    violations: list[str]
    user: dict[str, str]
    workspace_id: str
    page_size_max: int
    url: str
    eligible: int
    test_participants: list[str]

    def route(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> Answer:
        for methods, pattern, handler in ROUTES:
            if methods and method not in methods:
                continue
            if match := re.fullmatch(pattern, path):
                return handler(self, method=method, ids=match.groups(), query=query, body=body)
        return self._error(404, "Not found", f"{method} {path} is not part of this fake")

    # Each handler takes (method, ids: the path's captured ids, query, body) and answers (status, payload, headers).

    def _me(self, **_: Any) -> Answer:
        return 200, dict(self.user), {}

    def _workspaces(self, **_: Any) -> Answer:
        return 200, {"results": [{"id": self.workspace_id, "title": "My workspace"}]}, {}

    def _studies_post(self, *, body: Any, **_: Any) -> Answer:
        return self._study_create(body)

    def _studies_list(self, **_: Any) -> Answer:
        rows = [{k: s[k] for k in ("id", "name", "internal_name", "status", "total_available_places", "reward")}
                for s in self.studies.values()]
        return 200, {"results": rows}, {}

    def _study_get(self, *, ids: tuple[str, ...], **_: Any) -> Answer:
        study = self.studies.get(ids[0])
        if study is None:
            return self._error(404, "Not found", "No study with this id.")
        return 200, study, {}

    def _study_transition(self, *, ids: tuple[str, ...], body: Any, **_: Any) -> Answer:
        study = self.studies.get(ids[0])
        if study is None:
            return self._error(404, "Not found", "No study with this id.")
        if body["action"] == "PUBLISH":
            if study["status"] != "UNPUBLISHED":
                return self._error(400, "Bad transition", f"cannot publish a {study['status']} study")
            study["status"] = "ACTIVE"
        return 200, study, {}

    def _submissions_list(self, *, query: dict[str, list[str]], **_: Any) -> Answer:
        def q(name: str) -> str | None:
            return (query.get(name) or [None])[-1]

        return self._submissions_page(q("study"), int(q("page") or 1), int(q("page_size") or 20))

    def _submission_get(self, *, ids: tuple[str, ...], **_: Any) -> Answer:
        sub = self.submissions.get(ids[0])
        if sub is None:
            return self._error(404, "Not found", "No submission with this id.")
        return 200, {"id": sub["id"], "participant": sub["participant_id"], "status": sub["status"],
                     "started_at": sub["started_at"], "completed_at": sub["completed_at"],
                     "study_id": sub["study_id"], "entered_code": sub["study_code"],
                     "return_requested": sub["return_requested"]}, {}

    def _submission_demographics(self, *, ids: tuple[str, ...], **_: Any) -> Answer:
        sub = self.submissions.get(ids[0])
        snapshot = self.demographics.get(ids[0])
        if sub is None or snapshot is None:
            return 404, {}, {}  # Prolific's description: 404 with an empty schema when none is archived
        return 200, {"submission_id": sub["id"], "participant_id": sub["participant_id"],
                     "custom_study_tncs_accepted_at": "Not Applicable", "started_at": sub["started_at"],
                     "completed_at": sub["completed_at"], "archived_at": sub["completed_at"], "time_taken": 600,
                     "completion_code": sub["study_code"], "total_approvals": 42,
                     "demographics": dict(snapshot)}, {}

    def _submission_transition(self, *, ids: tuple[str, ...], body: Any, **_: Any) -> Answer:
        return self._transition(ids[0], body)

    def _submission_request_return(self, *, ids: tuple[str, ...], **_: Any) -> Answer:
        sub = self.submissions.get(ids[0])
        if sub is None:
            return self._error(404, "Not found", "No submission with this id.")
        sub["return_requested"] = now_iso()
        return 200, {"id": sub["id"], "status": sub["status"], "participant": sub["participant_id"],
                     "return_requested": sub["return_requested"]}, {}

    def _bulk_approve(self, *, body: Any, **_: Any) -> Answer:
        for sid in body.get("submission_ids") or []:
            if sid in self.submissions and self.submissions[sid]["status"] == "AWAITING REVIEW":
                self.submissions[sid]["status"] = "APPROVED"
        return 200, "The request to bulk approve has been made successfully.", {}

    def _bonus_payments(self, *, body: Any, **_: Any) -> Answer:
        return self._bonus_setup(body)

    def _bulk_bonus_pay(self, *, ids: tuple[str, ...], **_: Any) -> Answer:
        bulk = self.bulk_bonuses.get(ids[0])
        if bulk is None:
            return self._error(404, "Not found", "No bulk bonus with this id.")
        for participant, amount in bulk["lines"]:
            self.payments.append({"bulk": ids[0], "participant_id": participant, "amount": amount})
        bulk["paid_times"] += 1
        return 202, "The bonuses will be paid.", {}

    def _messages_bulk(self, *, body: Any, **_: Any) -> Answer:
        self.messages.append(dict(body))
        return 204, None, {}

    def _group_create(self, *, body: Any, **_: Any) -> Answer:
        group = {"id": hexid(), "name": body["name"], "workspace_id": body.get("workspace_id"),
                 "description": body.get("description"), "participant_count": len(body.get("participant_ids") or []),
                 "is_deleted": False, "members": list(body.get("participant_ids") or [])}
        self.groups[group["id"]] = group
        return 201, {k: v for k, v in group.items() if k != "members"}, {}

    def _group_participants(self, *, method: str, ids: tuple[str, ...], body: Any, **_: Any) -> Answer:
        group = self.groups.get(ids[0])
        if group is None:
            return self._error(404, "Not found", "No group with this id.")
        if method == "POST":
            group["members"] += [p for p in body.get("participant_ids") or [] if p not in group["members"]]
        elif method == "DELETE":
            group["members"] = [p for p in group["members"] if p not in (body.get("participant_ids") or [])]
        return 200, {"results": [{"participant_id": p, "datetime_created": now_iso()}
                                 for p in group["members"]]}, {}

    def _hook_secret(self, *, body: Any, **_: Any) -> Answer:
        value = secrets.token_urlsafe(32)
        self.secrets[body["workspace_id"]] = value
        return 201, {"id": hexid(), "value": value, "workspace_id": body["workspace_id"]}, {}

    def _hook_subscribe(self, *, body: Any, **_: Any) -> Answer:
        sub = {"id": hexid(), "event_type": body["event_type"], "target_url": body["target_url"],
               "workspace_id": body["workspace_id"], "is_enabled": False}
        hook_secret = secrets.token_hex(16)
        self.subscriptions[sub["id"]] = {**sub, "hook_secret": hook_secret}
        return 201, {"results": [sub]}, {"X-Hook-Secret": hook_secret}

    def _hook_confirm(self, *, ids: tuple[str, ...], body: Any, **_: Any) -> Answer:
        sub = self.subscriptions.get(ids[0])
        if sub is None or sub["hook_secret"] != body.get("secret"):
            return self._error(400, "Bad secret", "The secret does not match.")
        sub["is_enabled"] = True
        return 200, {k: v for k, v in sub.items() if k != "hook_secret"}, {}

    # --- the pre-flight: cost calculator, eligibility count, test participants and test studies -------------------

    def _filters(self, **_: Any) -> Answer:
        """Prolific's filter list (a few of them): language filters with their choices, ids not fixed anywhere."""
        languages = {"1": "English", "2": "French", "3": "German", "4": "Italian", "5": "Spanish", "6": "Arabic"}
        return 200, {"results": [
            {"filter_id": "first-language", "title": "First language", "type": "select", "data_type": "ChoiceID",
             "question": "What is your first language?", "choices": dict(languages)},
            {"filter_id": "fluent-languages", "title": "Fluent languages", "type": "select", "data_type": "ChoiceID",
             "question": "Which of the following languages are you fluent in?",
             "choices": {str(int(k) + 100): v for k, v in languages.items()}},
            {"filter_id": "age", "title": "Age", "type": "range", "question": "What is your age?",
             "min": 18.0, "max": 100.0, "data_type": "integer"},
        ], "_links": {}, "meta": {}}, {}

    def _cost_calculator(self, *, body: Any, **_: Any) -> Answer:
        """Prolific's fee (33.3 % of the rewards) and VAT on the fee (20 %), in cents."""
        rewards = body["reward"] * body["total_available_places"]
        fee = round(rewards * 0.333)
        return 200, {"total_cost": float(rewards + fee + round(fee * 0.2))}, {}

    def _eligibility_count(self, **_: Any) -> Answer:
        return 200, {"count": float(self.eligible)}, {}

    def _test_participant(self, **_: Any) -> Answer:
        self.test_participants.append(hexid())
        return 201, {"participant_id": self.test_participants[-1]}, {}

    def _test_study(self, *, ids: tuple[str, ...], **_: Any) -> Answer:
        draft = self.studies.get(ids[0])
        if draft is None:
            return self._error(404, "Not found", "No study with this id.")
        if draft["status"] != "UNPUBLISHED" or not self.test_participants:
            return self._error(400, "Cannot test", "A test study needs a draft and at least one test participant.")
        test = {**draft, "id": hexid(), "status": "ACTIVE", "internal_name": f"test of {draft['id']}"}
        self.studies[test["id"]] = test
        return 200, {"study_id": test["id"], "study_url": f"https://app.prolific.com/studies/{test['id']}"}, {}

    def _error(self, status: int, title: str, detail: str) -> Answer:
        return status, {"error": {"status": status, "error_code": status * 100, "title": title,
                                  "detail": detail}}, {}

    def _study_create(self, body: dict[str, Any]) -> Answer:
        codes = [c["code"] for c in body.get("completion_codes") or []]
        if len(codes) != len(set(codes)):
            return self._error(400, "Invalid completion codes", "Each code must be unique within a study.")
        for code in body.get("completion_codes") or []:
            for action in code["actions"]:
                if action["action"] == "FIXED_SCREEN_OUT_PAYMENT" and action["fixed_screen_out_reward"] >= \
                        body["reward"]:
                    return self._error(400, "Invalid screen-out reward", "It must be less than the study reward.")
        if not body.get("external_study_url"):
            return self._error(400, "Missing URL", "external_study_url is required.")
        study = {**body, "id": hexid(), "status": "UNPUBLISHED", "is_ready_to_publish": True}
        self.studies[study["id"]] = study
        return 201, study, {}

    def _submissions_page(self, study_id: str | None, page: int, page_size: int) -> Answer:
        size = max(1, min(page_size, self.page_size_max))
        rows = [s for s in self.submissions.values() if study_id in (None, s["study_id"])]
        chunk = rows[(page - 1) * size: page * size]
        more = page * size < len(rows)
        nxt = f"{self.url}/api/v1/submissions/?study={study_id}&page={page + 1}&page_size={size}" if more else None
        results = [{k: s[k] for k in ("id", "participant_id", "status", "started_at", "completed_at", "has_siblings",
                                      "study_code", "return_requested")} for s in chunk]
        return 200, {"results": results, "_links": {"self": {"href": None}, "next": {"href": nxt},
                                                    "previous": {"href": None}, "last": {"href": None}},
                     "meta": {"count": len(rows)}}, {}

    def _transition(self, sid: str, body: dict[str, Any]) -> Answer:
        sub = self.submissions.get(sid)
        if sub is None:
            return self._error(404, "Not found", "No submission with this id.")
        action = body["action"]
        if action == "REJECT":
            message = body.get("message") or ""
            if len(message) < 100:
                self.violations.append(f"rejection message of {len(message)} characters (Prolific needs 100)")
                return self._error(400, "Invalid message", "The message must be at least 100 characters long.")
            if not body.get("rejection_category"):
                return self._error(400, "Missing category", "rejection_category is required to reject.")
        target = {"APPROVE": "APPROVED", "REJECT": "REJECTED", "SCREEN_OUT": "SCREENED OUT"}.get(action)
        if target and sub["status"] == "AWAITING REVIEW":
            sub["status"] = target
        elif target and sub["status"] != target:
            return self._error(400, "Bad transition", f"cannot {action.lower()} a {sub['status']} submission")
        return 200, {"id": sub["id"], "status": sub["status"], "participant": sub["participant_id"],
                     "started_at": sub["started_at"], "study_id": sub["study_id"]}, {}

    def _bonus_setup(self, body: dict[str, Any]) -> Answer:
        study_id = body.get("study_id")
        if study_id not in self.studies:
            return self._error(400, "Unknown study", "The study does not exist.")
        taken_part = {s["participant_id"] for s in self.submissions.values() if s["study_id"] == study_id}
        lines, bad = [], []
        for line in (body.get("csv_bonuses") or "").splitlines():
            if not line.strip():
                continue
            participant, amount = line.split(",")
            if participant not in taken_part:
                bad.append(participant)
            lines.append((participant, float(amount)))
        if bad:
            return self._error(400, "Invalid participants", f"Not in the study: {', '.join(bad)}")
        amount = round(sum(a for _, a in lines) * 100)
        bulk = {"id": hexid(), "study": study_id, "amount": amount, "fees": round(amount * 0.333),
                "vat": 0, "total_amount": amount + round(amount * 0.333)}
        self.bulk_bonuses[bulk["id"]] = {**bulk, "lines": lines, "paid_times": 0}
        return 201, bulk, {}


# (methods it answers, or () for any; the path, matched whole; the handler). Paths are distinct, so order is free.
ROUTES: list[tuple[tuple[str, ...], str, Callable[..., Answer]]] = [
    (("GET",), r"/api/v1/users/me/", ProlificBehaviour._me),
    (("GET",), r"/api/v1/workspaces/", ProlificBehaviour._workspaces),
    (("POST",), r"/api/v1/studies/", ProlificBehaviour._studies_post),
    (("GET",), r"/api/v1/studies/", ProlificBehaviour._studies_list),
    ((), r"/api/v1/projects/\w+/studies/", ProlificBehaviour._studies_list),
    ((), r"/api/v1/studies/(\w+)/", ProlificBehaviour._study_get),
    ((), r"/api/v1/studies/(\w+)/transition/", ProlificBehaviour._study_transition),
    (("POST",), r"/api/v1/studies/(\w+)/test-study", ProlificBehaviour._test_study),
    (("GET",), r"/api/v1/filters/", ProlificBehaviour._filters),
    (("POST",), r"/api/v1/study-cost-calculator/", ProlificBehaviour._cost_calculator),
    (("POST",), r"/api/v1/eligibility-count/", ProlificBehaviour._eligibility_count),
    (("POST",), r"/api/v1/researchers/participants/", ProlificBehaviour._test_participant),
    (("GET",), r"/api/v1/submissions/", ProlificBehaviour._submissions_list),
    ((), r"/api/v1/submissions/(\w+)/", ProlificBehaviour._submission_get),
    (("GET",), r"/api/v1/submissions/(\w+)/demographics/", ProlificBehaviour._submission_demographics),
    ((), r"/api/v1/submissions/(\w+)/transition/", ProlificBehaviour._submission_transition),
    ((), r"/api/v1/submissions/(\w+)/request-return/", ProlificBehaviour._submission_request_return),
    ((), r"/api/v1/submissions/bulk-approve/", ProlificBehaviour._bulk_approve),
    ((), r"/api/v1/submissions/bonus-payments/", ProlificBehaviour._bonus_payments),
    ((), r"/api/v1/bulk-bonus-payments/(\w+)/pay/", ProlificBehaviour._bulk_bonus_pay),
    ((), r"/api/v1/messages/bulk/", ProlificBehaviour._messages_bulk),
    (("POST",), r"/api/v1/participant-groups/", ProlificBehaviour._group_create),
    ((), r"/api/v1/participant-groups/(\w+)/participants/", ProlificBehaviour._group_participants),
    ((), r"/api/v1/hooks/secrets/", ProlificBehaviour._hook_secret),
    ((), r"/api/v1/hooks/subscriptions/", ProlificBehaviour._hook_subscribe),
    ((), r"/api/v1/hooks/subscriptions/(\w+)/", ProlificBehaviour._hook_confirm),
]
