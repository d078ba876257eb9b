"""Prolific's side of the pre-flight before publishing (platforms/services/preflight.py): the study's cost from
Prolific's own calculator (`POST /api/v1/study-cost-calculator/`), the participants eligible for its filters
(`POST /api/v1/eligibility-count/`), and a run by a test participant (`POST /api/v1/researchers/participants/`, then
`POST /api/v1/studies/<draft>/test-study`). Calls go through the one client, `platforms.clients.prolific`."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from platforms.backends.base import StudyCost, StudyPlan, TestRun
from platforms.clients.prolific import ProlificClient

CALCULATOR = "Prolific's study cost calculator (fees and VAT of the account included)"


def prolific_study_cost(client: ProlificClient, plan: StudyPlan) -> StudyCost:
    answer = client.study_cost(reward_cents=plan.reward_cents, places=plan.places) or {}
    total = Decimal(str(answer.get("total_cost") or 0)) / 100
    rewards = Decimal(plan.reward_cents * plan.places) / 100
    return StudyCost(total=total.quantize(Decimal("0.01")), currency=plan.currency, rewards=rewards,
                     source=CALCULATOR, computed=False)


def prolific_eligible_count(client: ProlificClient, filters: list[dict[str, Any]], workspace_id: str) -> int:
    answer = client.eligible_count(filters=filters, workspace_id=workspace_id) or {}
    return int(answer.get("count") or 0)


def prolific_test_run(client: ProlificClient, draft_id: str, *, email: str = "") -> TestRun:
    participant = ""
    if email:
        participant = str((client.test_participant_create(email) or {}).get("participant_id") or "")
    answer = client.test_study_create(draft_id) or {}
    return TestRun(test_study_id=str(answer.get("study_id") or ""), study_url=str(answer.get("study_url") or ""),
                   participant_id=participant)
