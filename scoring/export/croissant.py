"""Croissant metadata (MLCommons, JSON-LD) of an export: its files with checksums, one record set per file with its
fields, and the responsible-AI (RAI) fields from the card's facts. Written beside every export (`<name>.croissant.json`)
and into the hub folder (`croissant.json`); the tests validate it and read the records back with `mlcroissant`."""
from __future__ import annotations

import re
from typing import Any

from scoring.export.annotator_votes import VOTES_FIELDS, VOTES_TABLE
from scoring.export.formats import FIELDS, STEL_COLUMNS, row_columns

CONFORMS_TO = ["http://mlcommons.org/croissant/1.0", "http://mlcommons.org/croissant/RAI/1.0"]
# The @context of Croissant 1.0 (mlcroissant's make_context) with the RAI vocabulary.
CONTEXT: dict[str, Any] = {
    "@language": "en", "@vocab": "https://schema.org/", "citeAs": "cr:citeAs", "column": "cr:column",
    "conformsTo": "dct:conformsTo", "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/", "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"}, "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty", "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract", "field": "cr:field", "fileProperty": "cr:fileProperty", "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet", "format": "cr:format", "includes": "cr:includes", "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath", "key": "cr:key", "md5": "cr:md5", "parentField": "cr:parentField", "path": "cr:path",
    "recordSet": "cr:recordSet", "references": "cr:references", "regex": "cr:regex", "repeated": "cr:repeated",
    "replace": "cr:replace", "samplingRate": "cr:samplingRate", "sc": "https://schema.org/",
    "separator": "cr:separator", "source": "cr:source", "subField": "cr:subField", "transform": "cr:transform",
}
STEL_SOURCE = dict(zip(["anchor_1", "anchor_2", "alternative_1_1", "alternative_1_2", "correct_alternative", "id",
                        "votes", "style_type"], STEL_COLUMNS, strict=True))
STEL_CITATION = ("@inproceedings{wegmann-nguyen-2021-capture, title = {Does It Capture {STEL}? A Modular, "
                 "Similarity-based Linguistic Style Evaluation Framework}, author = {Wegmann, Anna and Nguyen, Dong}, "
                 "booktitle = {Proceedings of EMNLP 2021}, year = {2021}}")


def _record_set_id(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", path.rsplit(".", 1)[0]).strip("-") or "records"


def _fields(record_set: str, file_id: str, *, fmt: str, ids_only: bool, table: str = "") -> list[dict[str, Any]]:
    if table == VOTES_TABLE:
        return [{"@type": "cr:Field", "@id": f"{record_set}/{name}", "name": name, "description": spec.description,
                 "dataType": spec.croissant, "source": {"fileObject": {"@id": file_id}, "extract": {"column": name}}}
                for name, spec in VOTES_FIELDS.items()]
    if fmt == "stel-tsv":
        names = list(STEL_SOURCE)
    else:
        names = row_columns(ids_only=ids_only, with_setup=fmt == "hub" and not ids_only)
    return [{"@type": "cr:Field", "@id": f"{record_set}/{name}", "name": name,
             "description": FIELDS[name].description, "dataType": FIELDS[name].croissant,
             "source": {"fileObject": {"@id": file_id},
                        "extract": {"column": STEL_SOURCE[name] if fmt == "stel-tsv" else name}}}
            for name in names]


def _uncertainty_analysis(facts: dict[str, Any]) -> list[str]:
    """The card's per-item uncertainty in one line: the models and the expected number of wrong gold labels."""
    if not facts.get("available"):
        return []
    overall = facts["overall"]
    chosen = "; ".join(f"{c['study']}: {c['model']} ({c['reason']})" for c in facts.get("model_choice") or [])
    return [f"Per-item uncertainty (p_correct, {', '.join(facts['models'])}): expected wrong gold labels "
            f"{overall['expected_wrong_gold_labels']} of {overall['with_uncertainty']} instances with votes"
            + (f"; model per study: {chosen}" if chosen else "")]


def _people(card: dict[str, Any]) -> dict[str, Any]:
    studies = card["collection"]["studies"]
    platforms = sorted({s["platform"] for s in studies} | {p for s in studies for p in s["participant_platforms"]})
    demographics = [f"{s['study']}: {attribute}: {values}" for s in studies
                    for attribute, values in s["demographics"].items()]
    pay = [f"{s['study']}: {s['pay']['reward_per_batch']} {s['pay']['currency']} per batch, median effective "
           f"{s['pay']['median_effective_hourly_pay']} {s['pay']['currency']}/h"
           + (f"; bonuses paid {s['pay']['bonuses'].get('paid')}" if s["pay"].get("bonuses") else "")
           for s in studies]
    collected = [f"{s['study']}: {s['participants']['arrived']} participants arrived, "
                 f"{s['participants']['completed_a_batch']} completed a batch, screened out "
                 f"{s['participants']['screened_out'] or 'none'}, excluded {s['participants']['excluded'] or 'none'}"
                 for s in studies]
    return {"platforms": platforms, "demographics": demographics, "pay": pay, "collected": collected}


def croissant_build(*, card: dict[str, Any], files: list[dict[str, Any]], encoding: str, url: str = ""
                    ) -> dict[str, Any]:
    """The JSON-LD document; `files` are the card's data files (paths relative to the document's folder)."""
    fmt, ids_only = card["format"], bool(card.get("ids_only"))
    distribution, record_sets = [], []
    for f in files:
        file_id = f["path"]
        distribution.append({"@type": "cr:FileObject", "@id": file_id, "name": file_id, "contentUrl": f["path"],
                             "encodingFormat": encoding, "sha256": f["sha256"], "contentSize": f"{f['bytes']} B"})
        record_set = _record_set_id(f["path"])
        if f.get("table") == VOTES_TABLE:
            description = (f"{f['rows']} votes: every valid vote on the instances, with its annotator's keyed "
                           "pseudonym")
        else:
            description = f"{f['rows']} instances" + (f" of {f['config']}, split {f['split']}" if f.get("config")
                                                      else "")
        record_sets.append({
            "@type": "cr:RecordSet", "@id": record_set, "name": record_set, "description": description,
            "field": _fields(record_set, file_id, fmt=fmt, ids_only=ids_only, table=f.get("table", ""))})
    people = _people(card)
    collection, agreement, licences = card["collection"], card["agreement"], card["licences"]
    first, last = [], []
    for s in collection["studies"]:
        if s["dates"]["first_session"]:
            first.append(s["dates"]["first_session"])
        if s["dates"]["last_response"]:
            last.append(s["dates"]["last_response"])
    k = sorted({s["design"]["annotators_per_item"] for s in collection["studies"]})
    doc: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": card["name"],
        "description": card["motivation"]["purpose"],
        "version": card["version"],
        "datePublished": card["created_at"],
        "license": sorted({f["url"] for f in licences["corpora"] if f["url"]}) or ["unknown"],
        "url": url or "https://github.com/nlpsoc/STEL",
        "citeAs": STEL_CITATION,
        "creator": {"@type": "sc:Organization", "name": card["motivation"]["created_with"]},
        "keywords": ["style", "STEL", "style representations", "crowdsourcing"],
        "inLanguage": sorted({c["language"] for c in card["preprocessing"]["corpora"]}
                             | {d["tag"] for d in (card.get("language") or {}).get("data", [])}),
        "distribution": distribution,
        "recordSet": record_sets,
        # Responsible AI (Croissant RAI 1.0), from the card's facts.
        "rai:dataCollection": (
            "Task instances generated from parallel paraphrase corpora (STEL's procedure)"
            + (", annotated in the browser by crowdworkers: " + "; ".join(people["collected"]) if people["collected"]
               else "; not annotated by people here") + "."),
        "rai:dataCollectionType": ["Crowdsourced annotation", "Derived from existing parallel corpora"],
        "rai:dataCollectionRawData": "; ".join(
            f"{f['corpus']} ({f['licence'] or 'licence not recorded'}): {f['attribution'] or '—'}"
            for f in licences["corpora"]),
        "rai:dataCollectionTimeFrame": [min(first), max(last)] if first and last else [],
        "rai:dataPreprocessingProtocol": [
            f"{c['corpus']}: format {c['import_format']}, detokenized {c['detokenize']}, pair test "
            f"{(c['pair_test'] or {}).get('min_edit_distance')}" for c in card["preprocessing"]["corpora"]],
        "rai:dataAnnotationProtocol": [
            f"{s['study']}: {s['screening']['policy']}; k = {s['design']['annotators_per_item']}, m = "
            f"{s['design']['min_correct']}" for s in collection["studies"]]
        + ([collection["filter"]["rule"]] if collection["filter"] else []),
        "rai:dataAnnotationPlatform": people["platforms"] or ["none"],
        "rai:dataAnnotationAnalysis": [
            f"{e['study']}: Fleiss' kappa {e.get('fleiss_kappa')}, Krippendorff's alpha "
            f"{e.get('krippendorff_alpha')} ({e['source']})" for e in agreement.get("studies", [])]
        + _uncertainty_analysis(card.get("uncertainty") or {}),
        "rai:annotationsPerItem": ", ".join(map(str, k)) or "0",
        "rai:annotatorDemographics": people["demographics"] or ["not collected"],
        "rai:machineAnnotationTools": ["none: labels come from the corpora's construction; votes from people"],
        "rai:dataUseCases": card["motivation"]["intended_uses"],
        "rai:dataLimitations": card["limitations"],
        "rai:dataBiases": [f"{component}: leak audit {'passed' if r['passed'] else 'found ' + ', '.join(r['leaks'])}"
                           for component, r in card["leak_audit"].items()],
        "rai:personalSensitiveInformation": [card["composition"]["personal_information"]],
        "rai:dataSocialImpact": "A measurement instrument for style representations; "
                                "pay of the annotators: " + ("; ".join(people["pay"]) or "no annotators") + ".",
        "rai:dataReleaseMaintenancePlan": card["maintenance"]["plan"],
    }
    if not doc["rai:dataCollectionTimeFrame"]:
        del doc["rai:dataCollectionTimeFrame"]
    return doc
