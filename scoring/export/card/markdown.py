"""The card for people: one Markdown renderer per section of scoring.export.card.facts, from the same facts."""
from __future__ import annotations

import json
from typing import Any


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _money(value: Any) -> str:
    return "—" if value is None else f"{float(value):.2f}"


def _counts(counts: dict[str, Any]) -> str:
    return ", ".join(f"{key}: {value}" for key, value in counts.items()) or "—"


def _ci(ci: Any) -> str:
    if not isinstance(ci, dict) or ci.get("low") is None:
        return ""
    return f" (95% CI {_fmt(ci.get('low'))}–{_fmt(ci.get('high'))})"


def _quote(text: str) -> list[str]:
    """A verbatim text as a Markdown block quote (every line kept, nothing interpreted as a heading)."""
    return [f"> {line}" if line else ">" for line in (text or "").splitlines()] or ["> —"]


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    def cell(value: Any) -> str:
        return _fmt(value).replace("|", "\\|").replace("\n", " ")

    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(cell(v) for v in row) + " |" for row in rows)]


def motivation_markdown(facts: dict[str, Any]) -> list[str]:
    lines = [facts["purpose"], ""]
    lines += [f"- **{c['name']}** ({c['kind']}): {c['style_1']} vs {c['style_2']}"
              + (f". {c['description']}" if c["description"] else "") for c in facts["components"]]
    lines += ["", f"Made with {facts['created_with']}.",
              "", "Intended uses: " + "; ".join(facts["intended_uses"]) + ".",
              "Out of scope: " + "; ".join(facts["out_of_scope"]) + "."]
    return lines


def composition_markdown(facts: dict[str, Any]) -> list[str]:
    setups = sorted({s for per in facts["per_component_setup"].values() for s in per})
    rows = [[component, *(per.get(s, 0) for s in setups), sum(per.values()),
             " / ".join(f"{k}: {v}" for k, v in facts["label_balance"].get(component, {}).items()),
             " / ".join(f"{k}: {v}" for k, v in facts["per_component_split"].get(component, {}).items())]
            for component, per in facts["per_component_setup"].items()]
    votes = facts["votes"]
    return [
        f"{facts['instances']} instances.", "",
        *_table(["component", *setups, "instances", "correct alternative (1 / 2)", "splits"], rows), "",
        f"Per status: {_counts(facts['per_status'])}; per corpus: {_counts(facts['per_corpus'])}.",
        f"Votes: {votes['from_annotations']} from annotations, {votes['published']} as published, {votes['none']} "
        f"none; correct votes (votes: instances): {_counts(votes['distribution'])}.",
        "Texts: " + ("included." if facts["texts_included"] else "**not included** (ids-only form; see Licences for "
                                                                 "the rebuild recipe)."),
        facts["personal_information"],
    ]


def collection_markdown(facts: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    if not facts["studies"]:
        lines.append("No study's annotations gave these instances their votes.")
    for s in facts["studies"]:
        p, pay, design = s["participants"], s["pay"], s["design"]
        lines += [f"### Study `{s['study']}`" + (f": {s['title']}" if s["title"] else ""), "",
                  f"- Platform: {s['platform']} (participants by link: {_counts(s['participant_platforms'])}); "
                  f"{s['origin_label']}; items: {s['item_kind']}",
                  f"- Dates: {s['dates']['first_session'] or '—'} to {s['dates']['last_response'] or '—'}",
                  f"- Participants: {p['arrived']} arrived, {p['consented']} consented, {p['started_items']} started "
                  f"items, {p['completed_a_batch']} completed a batch, {p['declined_consent']} declined consent, "
                  f"{p['timed_out']} timed out",
                  f"- Screened out (eligibility): {_counts(p['screened_out'])}; excluded: {_counts(p['excluded'])}",
                  f"- Screening: {s['screening']['policy']}; questions used: "
                  f"{', '.join(s['screening']['questions_used']) or '—'}",
                  f"- Design: k = {design['annotators_per_item']} annotators per instance, m = "
                  f"{design['min_correct']}, {design['items_per_batch']} items per batch, at most "
                  f"{design['max_batches_per_participant']} batches per participant, "
                  f"{design['batch_time_limit_minutes']} min per batch",
                  f"- Responses: {s['responses']['valid']} valid of {s['responses']['total']} "
                  f"({s['responses']['screening']} screening answers); median time per item (server clock): "
                  f"{_fmt(s['median_seconds_per_item'])} s",
                  f"- Pay: {_money(pay['reward_per_batch'])} {pay['currency']} per batch (target "
                  f"{_money(pay['target_hourly_pay'])} {pay['currency']}/h for {pay['estimated_minutes_per_batch']} "
                  f"min); median batch {_money(pay['median_minutes_per_batch'])} min, so a median effective "
                  f"{_money(pay['median_effective_hourly_pay'])} {pay['currency']}/h over "
                  f"{pay['batches_completed']} completed batches"]
        bonuses = pay.get("bonuses")
        if bonuses:
            lines.append(f"- Bonuses ({bonuses.get('currency', pay['currency'])}): paid {bonuses.get('paid')}, "
                         f"pending {bonuses.get('pending')}, outcome unknown {bonuses.get('unknown')}, to "
                         f"{bonuses.get('participants')} participant(s)")
        else:
            lines.append("- Bonuses: no platform ledger for this study")
        if s["demographics"]:
            lines.append("- Demographics (self-reported): " + "; ".join(
                f"{attribute}: {_counts(values)}" for attribute, values in s["demographics"].items()))
        else:
            lines.append("- Demographics: not collected")
        lines.append(f"- Retention: {s['retention']['days']} days after the study closed and its payments were settled"
                     + (f"; applied {s['retention']['applied_at']}" if s["retention"]["applied_at"] else ""))
        erased = s.get("erased_on_request", 0)
        lines.append(f"- Erased on request: {erased} participant(s)' data" + (
            " (their answers are not in these files)" if erased else ""))
        lines.append("")
    if facts["filter"]:
        f = facts["filter"]
        lines.append(f"Filter: {f['rule']} (filter run #{f['filter_run']} on study `{f['study']}`, {f['date']}); "
                     f"balanced: {f['balance']}; seed {f['seed']}; validated {f['validated']}, rejected "
                     f"{f['rejected']}, balanced away {f['balanced_away']}.")
    else:
        lines.append("Filter: none (no filter run decided these instances).")
    return lines


def consent_versions_markdown(versions: list[dict[str, Any]], consent_text: str) -> list[str]:
    """Every consent version participants agreed to, quoted in full with its sha256 prefix and how many agreed."""
    if not versions:
        return ["Consent text:", "", *_quote(consent_text), ""]
    lines = [f"Consent ({len(versions)} version{'s' if len(versions) != 1 else ''}; each participant's session "
             "records the version they agreed to):", ""]
    for n, v in enumerate(versions, 1):
        lines += [f"Consent version {n} (sha256 `{v['sha256'][:12]}`): agreed to by {v['participants']} "
                  f"participant(s) in {v['sessions']} session(s)" + (f", first on {v['first_agreed']}"
                                                                      if v.get("first_agreed") else ""), "",
                  *_quote(v["text"]), ""]
    return lines


def instructions_markdown(facts: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    if not facts["studies"]:
        return ["No study: nobody was instructed."]
    for s in facts["studies"]:
        lines += [f"### Study `{s['study']}`", "", "Instructions, as participants saw them:", "",
                  *_quote(s["task_description"]), ""]
        lines += consent_versions_markdown(s.get("consent_versions") or [], s["consent_text"])
        if s["eligibility_questions"]:
            lines += ["Eligibility questions:", ""]
            lines += [f"- {q.get('text', q.get('name'))} ({' / '.join(map(str, q.get('choices', [])))}; accepted: "
                      f"{', '.join(map(str, q.get('accept', []))) or 'any'})" for q in s["eligibility_questions"]]
            lines.append("")
        if s["questions"]:
            lines += ["Questions:", "", "```json", json.dumps(s["questions"], ensure_ascii=False, indent=1), "```", ""]
        if s["practice_items"]:
            lines += ["Practice items (with the feedback shown):", ""]
            for i, item in enumerate(s["practice_items"], 1):
                lines.append(f"{i}. A1: {item['anchor_1']}" + (f" · A2: {item['anchor_2']}" if item["anchor_2"]
                                                               else "")
                             + f" · S1: {item['sentence_1']} · S2: {item['sentence_2']} → {item['correct_answer']}"
                             + (f" ({item['explanation']})" if item["explanation"] else ""))
            lines.append("")
        if s["examples"]:
            lines += ["Worked examples:", ""]
            lines += [f"- {e.get('source', '')} → {e.get('rewrite', '')}" + (f" ({e['note']})" if e.get("note")
                                                                              else "") for e in s["examples"]]
            lines.append("")
        lines += [f"Screening questions: {s['screening_questions']}.", ""]
    return lines


def agreement_markdown(facts: dict[str, Any]) -> list[str]:
    if not facts:
        return ["No agreement was computed for these instances."]
    lines = []
    for entry in facts["studies"]:
        lines += [f"Study `{entry['study']}` ({entry['source']}): Fleiss' kappa {_fmt(entry.get('fleiss_kappa'))}"
                  f"{_ci(entry.get('fleiss_kappa_ci'))}, Krippendorff's alpha {_fmt(entry.get('krippendorff_alpha'))}"
                  f"{_ci(entry.get('krippendorff_alpha_ci'))}, majority accuracy "
                  f"{_fmt(entry.get('majority_accuracy'))}.", ""]
        if entry.get("bootstrap_seed") is not None:  # the run's own bootstrap, not the agreement dashboard's
            lines += [f"95% CIs: percentile bootstrap over items drawn by {entry['source']} "
                      f"({(entry.get('fleiss_kappa_ci') or {}).get('resamples')} resamples, seed "
                      f"{entry['bootstrap_seed']}); a separate bootstrap from the agreement dashboard's, whose bounds "
                      "may differ slightly.", ""]
        if entry["components"]:
            lines += _table(["component", "Fleiss' kappa", "95% CI", "Krippendorff's alpha", "95% CI",
                             "majority accuracy", "validated"],
                            [[name, c.get("fleiss_kappa"), _ci(c.get("fleiss_kappa_ci")).strip(" ()") or "—",
                              c.get("krippendorff_alpha"), _ci(c.get("krippendorff_alpha_ci")).strip(" ()") or "—",
                              c.get("majority_accuracy"), c.get("n_validated")]
                             for name, c in entry["components"].items()])
            lines.append("")
    return lines


def models_markdown(facts: list[dict[str, Any]]) -> list[str]:
    if not facts:
        return ["No language model annotated these instances."]
    rows = [[f"{m['label']} ({m['backend']}: {m['model']})", m["study"], m["asks"], m.get("accuracy"),
             m.get("accuracy_validated"), m.get("kappa_with_majority"),
             _ci(m.get("kappa_with_majority_ci")).strip(" ()") or "—",
             f"{_fmt(m.get('alpha_crowd'))} → {_fmt(m.get('alpha_with_model'))}", m.get("order_sensitive_share")]
            for m in facts]
    return [*_table(["model", "study", "answers", "accuracy on these rows", "on validated rows",
                     "kappa with human majority", "95% CI", "alpha crowd → with model", "order-sensitive"], rows),
            "", "Accuracy counts every order of display a model was asked (S1/S2 and anchors swapped); a missing "
            "answer counts as wrong. Agreement figures come from the study's latest agreement run. The model's "
            "answers are not among this dataset's votes."]


def leak_audit_markdown(facts: dict[str, Any]) -> list[str]:
    lines = []
    for component, report in facts.items():
        verdict = "passed: no surface feature decides the instances" if report["passed"] else \
            f"LEAKS: {', '.join(report['leaks'])}"
        lines.append(f"- **{component}** ({report['instances']} instances): {verdict}")
        lines += [f"  - warning: {w}" for w in report["warnings"]]
        lines += [f"  - note: {n}" for n in report["notes"]]
    return lines or ["—"]


def _rewrites_markdown(corpus: str, params: dict[str, Any] | None) -> list[str]:
    if not params:
        return []
    lines = [f"  - {corpus} was built from the accepted rewrites of study `{params['study']}` "
             f"({params['accepted_rewrites']} accepted; references: {params['references']}; splits "
             f"{params['splits']} by source, seed {params['seed']}); each pair's metadata names its response, writer "
             "and review, and a STEL ID names the source item and reference (`src#n`)."]
    review = params.get("review") or {}
    if review.get("statuses"):
        lines.append(f"  - Review: {_counts(review['statuses'])} by {len(review.get('reviewers', []))} "
                     f"reviewer(s); rejection reasons: {_counts(review.get('rejection_reasons') or {})}.")
    if params.get("source_filters"):
        lines.append(f"  - Sources were filtered before writing: {params['source_filters']}.")
    return lines + writing_signals_markdown(params)


def writing_signals_markdown(params: dict[str, Any]) -> list[str]:
    """What the rewrites' writing telemetry and signals found, and what was done with the flagged rewrites."""
    signals = params.get("writing_signals") or {}
    if not signals.get("rewrites"):
        return []
    telemetry = signals.get("telemetry", {})
    lines = [f"  - Writing telemetry: {signals['rewrites']} rewrites, {telemetry.get('consistent', 0)} with consistent "
             f"telemetry, {telemetry.get('inconsistent', 0)} inconsistent, {telemetry.get('none', 0)} without."]
    if not signals.get("computed_at"):
        return [*lines, "  - Writing signals were not measured."]
    flagged = signals.get("flagged", {})
    excluded = params.get("exclude_flagged")
    done = (f"{flagged.get('accepted', 0)} accepted, {flagged.get('rejected', 0)} rejected, "
            f"{flagged.get('pending', 0)} pending by the reviewers")
    lines.append(f"  - Writing signals flagged {flagged.get('rewrites', 0)} rewrite(s) ({done}); "
                 + (f"{params.get('excluded_flagged', 0)} accepted flagged rewrite(s) left out of this corpus "
                    f"(flagged by {', '.join(excluded)})." if excluded else "flagged rewrites were not left out."))
    for name, outcome in signals.get("by_signal", {}).items():
        label = signals.get("labels", {}).get(name, name)
        lines.append(f"    - {label}: {outcome['rewrites']} ({outcome['accepted']} accepted, {outcome['rejected']} "
                     f"rejected, {outcome['pending']} pending"
                     + (f", {outcome['excluded_from_corpus']} left out)" if excluded else ")"))
    return lines


def preprocessing_markdown(facts: dict[str, Any]) -> list[str]:
    lines = []
    for c in facts["corpora"]:
        kept = (f"{c['rows_read']} instances imported as published" if c["import_format"] == "stel" else
                f"{c['rows_read']} rows read, {c['pairs']} pairs kept, {c['skipped']} skipped")
        text = (f"- **{c['corpus']}** ({c['import_format']}, {c['language']}): {kept}; detokenized: "
                f"{_fmt(c['detokenize'])}" + (f" ({c['normalizer']})" if c["normalizer"] else ""))
        if c["pair_test"]:
            text += (f"; STEL's pair test with minimum edit distance {_fmt(c['pair_test']['min_edit_distance'])}, "
                     f"skipped by reason: {_counts(c['pair_test']['skipped'])}")
        if c["builder"]:
            text += f"; built by the {c['builder']} builder"
        lines.append(text)
        lines += _rewrites_markdown(c["corpus"], c["built_from_rewrites"])
    lines += [f"- instances of {g['corpus']}: {g['setup']}, seed {g['seed']}, count {_fmt(g['count'])} "
              f"({g['instances']} generated)" for g in facts["generation"]]
    return lines or ["—"]


def limitations_markdown(facts: list[str]) -> list[str]:
    return [f"- {note}" for note in facts] or ["- none recorded"]


def licences_markdown(facts: dict[str, Any]) -> list[str]:
    lines = [f"- **{f['corpus']}**: {f['licence'] or 'licence not recorded'}"
             + (f" ({f['name']}" + (f", {f['url']}" if f["url"] else "") + ")" if f["name"] else "")
             + ("; **not redistributable**" if f["redistributable"] is False else "")
             + (f"; {f['note']}" if f["note"] else "")
             + (f". Credit: {f['attribution']}" if f["attribution"] else "") for f in facts["corpora"]]
    if facts["mixed"]:
        lines += ["", f"This benchmark mixes licences ({', '.join(facts['licences'])}): each instance's texts stay "
                      "under the licence of the corpus it was drawn from (its `id` names it)."]
    if facts["not_recorded"]:
        lines += ["", f"No licence is recorded for {', '.join(facts['not_recorded'])}: check it before publishing."]
    if facts["rebuild"]:
        lines += ["", "The texts are not included. To rebuild them from your own copy of the corpora:", "", "```",
                  *facts["rebuild"], "```"]
    lines += ["", facts["annotations"]]
    return lines


def files_markdown(facts: list[dict[str, Any]]) -> list[str]:
    return _table(["file", "rows", "bytes", "sha256"],
                  [[f["path"], f["rows"], f["bytes"], f"`{f['sha256']}`"] for f in facts])


def version_markdown(facts: dict[str, Any]) -> list[str]:
    log = facts["changelog"]
    lines = [f"Version **{facts['version']}** of `{facts['name']}`: {log.get('summary', '')}."]
    for kind in ("added", "dropped", "relabelled", "votes_changed"):
        examples = (log.get("examples") or {}).get(kind) or []
        if examples and log.get("previous_version"):
            lines.append(f"- {kind.replace('_', ' ')} ({log[kind]}): " + ", ".join(f"`{e}`" for e in examples)
                         + (" …" if log[kind] > len(examples) else ""))
    lines += ["", facts["plan"]]
    return lines
