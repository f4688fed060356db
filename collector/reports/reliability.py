"""The study's reliability as the pages, the live status and their files word it: the headline
figures, each settled top's sentence, a target study's rows, the study page's Reliability box
(template context), the live status's brief and the interim ranking's probabilities. The
figures are computed in the background after each ballot's close
(:mod:`collector.studies.reliability`)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from collector import wording
from collector.models import Study
from collector.studies import reliability, typed_tops
from ranking.evaluation.settled_top import INTERVAL

DEFAULT_SHOWN_K = 20  # the top the Now box and the interim ranking speak of first


def _figure(value: Any) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def headline(report: dict[str, Any]) -> dict[str, Any]:
    """The figures the box leads with: the corrected split-half rho and rho_w with their
    corrected 2.5-97.5% ranges, and alpha."""
    halves = report.get("split_half") or {}
    out: dict[str, Any] = {"scope": halves.get("scope")}
    for metric in ("rho", "rho_w"):
        block = halves.get(metric) or {}
        out[metric] = block.get("corrected")
        out[f"{metric}_low"] = block.get("corrected_low")
        out[f"{metric}_high"] = block.get("corrected_high")
        out[f"{metric}_half"] = block.get("mean")
    out["alpha"] = (report.get("alpha") or {}).get("alpha")
    return out


def texts(report: dict[str, Any]) -> dict[str, str]:
    """The headline's figures as the box words them (the card's and the public page's words):
    rho and rho_w ``"corrected 0.807 (range 0.754 to 0.839)"``, and alpha with its units and
    the share of them answered unanimously."""
    halves = report.get("split_half") or {}
    return {
        "rho": corrected_text(halves.get("rho")),
        "rho_w": corrected_text(halves.get("rho_w")),
        "alpha": alpha_text(report.get("alpha")),
    }


def top_summaries(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One line per ``k``: an area study's tops as stored; a target study's summed over its
    targets (how many are settled, the expected overlap of all of them; the survivors, each
    target's own number, on one line)."""
    tops = report.get("settled_top") or []
    if not any(t.get("target") for t in tops):
        return [
            {
                **t,
                "all_settled": t["settled"],
                "sentence": sentence(t),
            }
            for t in tops
        ]
    groups: dict[int | str, list[dict[str, Any]]] = {}
    for top in tops:
        # Each target its own number of survivors: they make one line of their own.
        groups.setdefault("survivors" if top.get("survivors") else top["k"], []).append(top)
    every = max(len(entries) for entries in groups.values())
    lines = []
    for key, entries in groups.items():
        settled = sum(1 for e in entries if e["settled"])
        expected = sum(e["expected"] for e in entries)
        total = sum(e["k"] for e in entries)
        if key == "survivors":
            what = f"the survivors of each of {len(entries)} targets"
        elif len(entries) < every:  # a target with k candidates or fewer has no top k
            what = (
                f"top {key} of each of the {len(entries)} targets with more than {key} candidates"
            )
        else:
            what = f"top {key} of each of {len(entries)} targets"
        lines.append(
            {
                "k": None if key == "survivors" else key,
                "survivors": key == "survivors",
                "targets": len(entries),
                "settled_targets": settled,
                "expected": expected,
                "all_settled": settled == len(entries),
                "custom": entries[0].get("custom", False),
                "sentence": (
                    f"{what}: expected {expected:.1f} of {total} right; settled in {settled} "
                    f"of {len(entries)} targets."
                ),
            }
        )
    return lines


def sentence(top: dict[str, Any]) -> str:
    """A stored top's line: ``top 20: expected 18.6 of 20 right (90%: 17 to 20); settled.`` or
    ``...; 3 items in doubt.`` (no interval for a report stored before it was kept)."""
    k, doubt = top["k"], top["in_doubt"]
    verdict = "settled" if top["settled"] else f"{doubt} item{'s' if doubt != 1 else ''} in doubt"
    spread = interval_text(top.get("interval"))
    return f"top {k}: expected {top['expected']:.1f} of {k} right{spread}; {verdict}."


def box(study: Study) -> dict[str, Any]:
    """The study page's Reliability box and the Now box's sentence (template context)."""
    state = reliability.status(study)
    report = state.report
    shown = json.dumps(state.as_dict(), sort_keys=True, default=str).encode()
    context: dict[str, Any] = {
        # What the box shows, in brief: the page's script swaps the box in when it changes.
        "reliability_version": hashlib.sha256(shown).hexdigest()[:16],
        "reliability": report,
        "reliability_pending": state.pending_ballot,
        "reliability_error": state.error,
        "reliability_max_k": typed_tops.MAX_CUSTOM_K,
    }
    if report is not None:
        context["reliability_headline"] = headline(report)
        context["reliability_texts"] = texts(report)
        context["reliability_tops"] = top_summaries(report)
        context["reliability_targets"] = per_target_rows(report)
    return context


def per_target_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """A target study's per-target split-half, alpha and settled tops (empty for an area study)."""
    halves = (report.get("split_half") or {}).get("targets") or []
    alphas = {a["target"]: a for a in (report.get("alpha") or {}).get("targets") or []}
    tops: dict[str, list[dict[str, Any]]] = {}
    for top in report.get("settled_top") or []:
        if top.get("target"):
            tops.setdefault(top["target"], []).append(top)
    return [
        {
            "target": t["target"],
            "items": t["items"],
            "rho": (t.get("rho") or {}).get("corrected"),
            "rho_w": (t.get("rho_w") or {}).get("corrected"),
            "alpha": alphas.get(t["target"], {}).get("alpha"),
            "tops": [sentence(e) for e in tops.get(t["target"], [])],
        }
        for t in halves
    ]


def live_summary(study: Study) -> dict[str, Any]:
    """What ``live.json`` and the live API add: the latest figures in brief (no item lists)."""
    state = reliability.status(study)
    report = state.report
    out: dict[str, Any] = {"pending_ballot": state.pending_ballot, "error": state.error or None}
    if report is None:
        return {**out, "after_ballot": None}
    out.update(
        after_ballot=report["ballot"],
        final=report["final"],
        computed_at=report["computed_at"],
        headline=headline(report),
        tops=[
            {
                k: v
                for k, v in t.items()
                if k
                in (
                    "k",
                    "target",
                    "survivors",
                    "custom",
                    "expected",
                    "interval",
                    "settled",
                    "in_doubt",
                    "targets",
                    "all_settled",
                    "settled_targets",
                    "sentence",
                )
            }
            for t in top_summaries(report)
        ],  # fmt: skip
    )
    return out


def annotate_interim(report: dict[str, Any] | None, rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    """The interim ranking's probabilities from the latest ``report``: for each row's item, its
    probability of being in the top ``k`` of the smallest stored ``k`` that holds it, and the
    sentence of the top 20 (or the smallest ``k``)."""
    if report is None:
        return {}
    tops = sorted(
        (t for t in report.get("settled_top") or [] if not t.get("target")),
        key=lambda t: t["k"],
    )
    chance: dict[int, tuple[int, float]] = {}
    for top in reversed(tops):  # smaller k last: it wins
        for entry in top["items"]:
            chance[entry["item_id"]] = (top["k"], entry["probability"])
    shown = next((t for t in tops if t["k"] == DEFAULT_SHOWN_K), tops[0] if tops else None)
    return {
        "interim_probability": [chance.get(int(r[0])) for r in rows],
        "interim_settled_after": report["ballot"],
        "interim_settled": None if shown is None else sentence(shown),
    }


def interval_text(span: Any) -> str:
    """A stored top's ``interval`` as the pages and the card say it after the expected number
    right: ``" (90%: 17 to 20)"``, ``" (90%: 10)"``; ``""`` when it is missing or malformed."""
    if not (isinstance(span, list | tuple) and len(span) == 2):
        return ""
    low, high = span
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)):
        return ""
    level = f"{INTERVAL:.0%}"
    return f" ({level}: {low})" if low == high else f" ({level}: {low} to {high})"


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def corrected_text(block: Any) -> str:
    """A stored split-half figure (``corrected``, ``corrected_low``, ``corrected_high``) as every
    page and the card say it: ``"corrected 0.807 (range 0.754 to 0.839)"``, the range
    Spearman-Brown corrected like the value; ``"not computed"`` when the value is missing."""
    if not isinstance(block, dict) or not _number(block.get("corrected")):
        return "not computed"
    text = f"corrected {block['corrected']:.3f}"
    low, high = block.get("corrected_low"), block.get("corrected_high")
    if _number(low) and _number(high):
        text += f" (range {low:.3f} to {high:.3f})"
    return text


def alpha_text(block: Any) -> str:
    """A stored alpha (``alpha``, ``units``, ``unanimous``) as every page and the card say it:
    ``"0.764 over 189 pairs answered by two or more voters, 88% of them answered
    unanimously"``; ``"not computed (0 pairs answered by two or more voters)"``."""
    if not isinstance(block, dict):
        return "not computed"
    units = int(block["units"]) if _number(block.get("units")) else 0
    pairs = f"{wording.count(units, 'pair')} answered by two or more voters"
    if not _number(block.get("alpha")):
        return f"not computed ({pairs})"
    text = f"{block['alpha']:.3f} over {pairs}"
    if _number(block.get("unanimous")) and units:
        text += f", {wording.percent(block['unanimous'])} of them answered unanimously"
    return text
