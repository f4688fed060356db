"""A release's dataset card: its content (a JSON object kept with the release, which the public
page shows) and its text, ``README.md``, with the Hugging Face YAML front matter that lets
``datasets.load_dataset(<folder>, "ranking")`` (and ``"votes"``, ``"comparisons"``) read the
bundle.

Everything in the card comes from the study (its protocol, parameters, design, crowd and
exclusions, counted), from its ``dataset.json`` as the export registry writes it, and from its
stored reliability report (:func:`collector.studies.reliability.latest_report`). Voters appear
only as counts: no platform id, no address, no free text.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import yaml
from django.db.models import Count

from collector import wording
from collector.models import Study, VoidedVote, Vote, Voter
from collector.models.release_terms import LICENCES
from collector.releases import synthetic
from collector.releases.metadata import author_name
from collector.reports.reliability import alpha_text, corrected_text, interval_text
from collector.studies.designs import study_design

# The bundle's configurations for ``datasets``: (config name, data file), the first the default.
# All CSV: ``datasets`` reads every configuration of a folder with one builder. The features
# keep every token a string (a token "1984" is text, not a number).
# Hugging Face's size categories, by the ranking's rows.
SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
         (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M"))  # fmt: skip
PROTOCOL = (
    "Voters answered pairwise relatedness comparisons: each comparison shows two items and asks "
    "which one is more related. Voting ran in ballots (the adaptive protocol of Lombardo et al., "
    "Top-Rank-Focused Adaptive Vote Collection for the Evaluation of Domain-Specific Semantic "
    "Models): after each ballot the items were scored and only the best share alpha went on to "
    "the next, so that the votes concentrate on the top of the ranking. The final ranking orders "
    "every item by the ballot it reached, then by its score."
)
PERSONAL_DATA = (
    "Voters appear only as random pseudonyms (votes.csv, column voter) that say nothing about "
    "them; no platform id, network address, free text or demographic information is released."
)


def _plain(report: dict[str, Any] | None) -> dict[str, Any] | None:
    """The report as plain JSON values (numpy numbers become Python's)."""
    if report is None:
        return None
    return json.loads(
        json.dumps(report, default=lambda v: v.item() if hasattr(v, "item") else str(v))
    )


def size_category(n: int) -> str:
    return next((label for bound, label in SIZES if n < bound), "n>10M")


def card_content(
    study: Study,
    *,
    dataset: dict[str, Any],
    release: dict[str, Any],
    report: dict[str, Any] | None,
    files: dict[str, str],
    configs: list[dict[str, Any]],
    figures: list[dict[str, str]],
) -> dict[str, Any]:
    """The card of a release of ``study``: ``dataset`` is its ``dataset.json``, ``release`` the
    release's ``title``, ``version``, ``licence`` (SPDX id), ``authors`` and ``date``; ``report``
    the reliability report (None: not computed); ``files`` the data files with their
    registry descriptions, ``configs`` the files read record by record (the registry's record
    sets: ``name``, ``file``, ``description``, ``columns`` and each column's ``kinds``),
    ``figures`` the figures' files."""
    licence = LICENCES[release["licence"]]
    design = study_design(study)
    card: dict[str, Any] = {
        **release,
        "licence_name": licence.name,
        "licence_url": licence.url,
        "slug": study.slug,
        "name": study.name,
        "question": study.question,
        "kind": "targets" if study.targets else "areas",
        "language": study.language,
        "protocol": PROTOCOL,
        "design": {
            "name": design.name,
            "described": design.describe(),
            "title": design.title,
            "summary": design.summary,
        },  # fmt: skip
        "estimator": study.get_estimator_display(),
        "parameters": dataset["parameters"],
        "counts": dataset["counts"],
        "dates": dataset["dates"],
        "crowd": crowd(study),
        "simulated": synthetic.counted(study),
        "exclusions": exclusions(study),
        "reliability": _plain(report),
        "files": [
            {"name": name, "content": dataset["files"].get(name, {}).get("content") or text}
            for name, text in files.items()
        ],
        "figures": figures,
        "gold_score": dataset["gold_score"],
        "spreadsheet_safety": dataset["spreadsheet_safety"],
        "personal_data": PERSONAL_DATA,
        "configs": configs,
    }
    if study.targets:
        design_of_targets = dict(dataset["target_design"])
        design_of_targets.pop("per_target", None)  # the ranking has every target's candidates
        card["target_design"] = design_of_targets
    card["citation"] = citation_text(card)
    return card


def crowd(study: Study) -> dict[str, Any]:
    """Who voted, counted: voters who gave at least one vote, by where they came from, and the
    voting rules they met."""
    sources = dict(
        Voter.objects.filter(study=study, votes__isnull=False)
        .values("source")
        .annotate(n=Count("id", distinct=True))
        .values_list("source", "n")
    )
    labels = dict(Voter.Source.choices)
    return {
        "voters": sum(sources.values()),
        "sources": {labels.get(source, source): n for source, n in sorted(sources.items())},
        "per_voter_cap": study.per_voter_cap,
        "allow_ties": study.allow_ties,
        "attention_checks": (
            {
                "every": study.check_every,
                "fail_limit": study.check_fail_limit,
                "exclude_at_limit": study.check_exclude,
            }
            if study.check_every
            else None
        ),  # fmt: skip
    }


def exclusions(study: Study) -> dict[str, int]:
    """Voters excluded by the staff, the votes they gave in ballots closed before (kept in
    votes.csv, marked voter_excluded, left out of the pooled estimates) and the votes voided
    while their ballot was open (answered again by others, not released); and the voters who
    withdrew (their data deleted at their request, :mod:`collector.participants.forgetting`:
    not excluded, and none of their votes left)."""
    excluded = Voter.objects.filter(
        study=study, excluded_at__isnull=False, forgotten_at__isnull=True
    )
    return {
        "voters": excluded.count(),
        "votes_kept_marked": Vote.objects.filter(ballot__study=study, voter__in=excluded).count(),
        "votes_voided": VoidedVote.objects.filter(ballot__study=study).count(),
        "withdrawn": Voter.objects.filter(study=study, forgotten_at__isnull=False).count(),
    }


def authors_text(card: dict[str, Any]) -> str:
    """The authors as cited, ``Family, Given; Family, Given`` (their ORCID iDs left out)."""
    return "; ".join(author_name(a) for a in card["authors"])


def citation_text(card: dict[str, Any], escape: Any = str) -> str:
    """The citation in words: ``Authors (year). Title (version x) [Data set]. Licence.``;
    ``escape`` is applied to the authors and the title (:func:`markdown` in README.md)."""
    year = card["date"][:4]
    return (
        f"{escape(authors_text(card))} ({year}). {escape(card['title'])} (version "
        f"{card['version']}) [Data set]. {card['licence']}."
    )


# Markdown's punctuation that could make a link, an image, emphasis, code, a table or a heading
# of text typed by staff; "<", ">" and "&" become HTML entities (the Hub renders HTML in a card).
MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~-])")


def markdown(text: str) -> str:
    """``text`` shown as typed in a Markdown card, whatever its punctuation or HTML."""
    return html.escape(MARKDOWN_SPECIAL.sub(r"\\\1", text), quote=False)


HUB_TYPES = {"integer": "int64", "float": "float64", "boolean": "bool", "text": "string"}


def front_matter(card: dict[str, Any]) -> dict[str, Any]:
    """The Hugging Face card's YAML metadata: licence, language, task and size categories, and
    one configuration per data file (``datasets`` reads them)."""
    return {
        "pretty_name": card["title"],
        "license": LICENCES[card["licence"]].hub,
        "language": [card["language"]],
        "task_categories": ["sentence-similarity"],
        "size_categories": [size_category(card["counts"]["items"])],
        "annotations_creators": synthetic.annotations_creators(card),
        "tags": ["relatedness", "pairwise-comparison", "ranking"]
        + (["crowdsourced"] if synthetic.share(card) != "all" else [])
        + (["synthetic"] if synthetic.share(card) != "none" else []),
        "dataset_info": [
            {"config_name": c["name"],
             "features": [{"name": col, "dtype": HUB_TYPES[kind]}
                          for col, kind in zip(c["columns"], c["kinds"], strict=True)]}
            for c in card["configs"]
        ],
        "configs": [
            {"config_name": c["name"], "data_files": [{"split": "train", "path": c["file"]}],
             **({"default": True} if k == 0 else {})}
            for k, c in enumerate(card["configs"])
        ],
    }  # fmt: skip


def readme(card: dict[str, Any]) -> str:
    """``README.md``: the YAML front matter, then the card in Markdown."""
    meta = yaml.safe_dump(front_matter(card), sort_keys=False, allow_unicode=True)
    return f"---\n{meta}---\n\n" + "\n".join(_body(card)) + "\n"


def _body(card: dict[str, Any]) -> list[str]:
    p, c, counts = card["parameters"], card["crowd"], card["counts"]
    simulated = synthetic.sentence(card)
    lines = [
        f"# {markdown(card['title'])}",
        "",
        *([f"**{simulated}**", ""] if simulated else []),
        f"Version {card['version']}, released {card['date']}, under {card['licence_name']} "
        f"({card['licence']}). Authors: {markdown(authors_text(card))}.",
        "",
        f"A ranking of {counts['items']:,} items by relatedness, from {counts['votes']:,} "
        f"pairwise votes of {synthetic.voters_words(card)}. The question voters answered: "
        f"“{card['question']}”.",
        "",
        "## Protocol",
        "",
        card["protocol"],
        "",
        "## Parameters and design",
        "",
        f"- ballots n_b = {p['n_ballots']}, alpha = {p['alpha']}, comparisons per item M = "
        f"{p['m']}, seed = {p['seed']}",
        f"- design: {design_text(card['design'])}",
        f"- estimator: {card['estimator']}",
        f"- ties {'allowed' if p['allow_ties'] else 'not allowed'}; at most "
        f"{p['per_voter_cap']} comparisons per voter and ballot",
        f"- {counts['areas']:,} {'target' if card['kind'] == 'targets' else 'area'}"
        f"{'s' if counts['areas'] != 1 else ''}, "
        f"{counts['tokens']:,} tokens, {counts['items']:,} items, {counts['ballots']} ballots, "
        f"{counts['votes']:,} votes ({counts['ties']:,} ties)",
    ]
    if "target_design" in card:
        t = card["target_design"]
        per = t["candidates_per_target"]
        lines.append(
            f"- a target study: {t['targets']} targets with {per['min']} to {per['max']} "
            f"candidates (median {per['median']}); each target's candidates are ranked on "
            "their own (rank_in_target)"
        )
    lines += ["", "## Crowd", "", *_crowd_lines(c), "", "## Exclusions", "",
              *exclusion_lines(card["exclusions"]), "", "## Reliability", "",
              *reliability_lines(card["reliability"]), "", "## Is the top settled?", "",
              *settled_lines(card["reliability"]), "", "## Files", ""]  # fmt: skip
    lines += [f"- `{f['name']}`: {f['content']}" if f["content"] else f"- `{f['name']}`"
              for f in card["files"]]  # fmt: skip
    lines += [
        "- `croissant.json`: Croissant 1.0 metadata; `CITATION.cff`: how to cite; "
        "`SHA256SUMS`: every file's checksum (`sha256sum -c SHA256SUMS`)",
        "",
        f'Load with `datasets.load_dataset("<this folder>", "{card["configs"][0]["name"]}")` '
        f"(configurations: {', '.join(c['name'] for c in card['configs'])}).",
        "",
        card["spreadsheet_safety"],
        "",
        "## Personal data",
        "",
        card["personal_data"],
        "",
        "## How to cite",
        "",
        citation_text(card, markdown),
        "",
        "The same in CITATION.cff (Citation File Format 1.2.0).",
    ]
    return lines


def _crowd_lines(c: dict[str, Any]) -> list[str]:
    sources = ", ".join(f"{n} {source}" for source, n in c["sources"].items()) or "none"
    lines = [f"{c['voters']:,} voters gave at least one vote ({sources})."]
    checks = c["attention_checks"]
    if checks:
        lines.append(
            f"Attention checks: one comparison in {checks['every']}; {checks['fail_limit']} "
            f"failures flag a voter"
            f"{', who is then excluded' if checks['exclude_at_limit'] else ''}."
        )
    else:
        lines.append("No attention checks.")
    return lines


def design_text(design: dict[str, Any]) -> str:
    """The design as the card and the public page name it: its name with its options, its
    title and its summary: ``adaptive: Adaptive (the paper's design). Every ballot ...``."""
    return f"{design['described']}: {design['title']}. {design['summary']}"


def exclusion_lines(e: dict[str, int]) -> list[str]:
    """The excluded and the withdrawn voters in words (the card's and the public page's)."""
    voters, withdrawn = e.get("voters") or 0, e.get("withdrawn") or 0
    if not voters:
        lines = ["No voter was excluded."]
    else:
        lines = [
            f"{voters} voter{'s were' if voters != 1 else ' was'} excluded. Their "
            f"{wording.count(e['votes_kept_marked'], 'vote')} in ballots closed before the "
            "exclusion are in votes.csv, marked voter_excluded, and left out of pooled estimates; "
            f"{wording.count(e['votes_voided'], 'vote')} of open ballots were voided and answered "
            "again by others."
        ]
    if withdrawn:
        lines.append(
            f"{withdrawn} voter{'s' if withdrawn != 1 else ''} withdrew: their data was deleted "
            "at their request, their votes with it (none of them is in votes.csv)."
        )
    return lines


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _interval(block: Any) -> str:
    """A split-half block: the half crowds' mean and the corrected value with its corrected
    range (:func:`collector.reports.reliability.corrected_text`)."""
    if not isinstance(block, dict) or not _number(block.get("mean")):
        return "not computed"
    corrected = corrected_text(block)
    return f"mean {block['mean']:.3f}" + ("" if corrected == "not computed" else f", {corrected}")


def reliability_lines(report: dict[str, Any] | None) -> list[str]:
    """The reliability section: split-half (rho and rho_w) and Krippendorff's alpha, from the
    stored report (:func:`collector.studies.reliability.latest_report`; None: not computed)."""
    if not isinstance(report, dict) or not report:
        return ["Reliability was not computed for this study."]
    half: dict[str, Any] = report.get("split_half") or {}
    alpha: dict[str, Any] = report.get("alpha") or {}
    half = half if isinstance(half, dict) else {}
    alpha = alpha if isinstance(alpha, dict) else {}
    ballot = report.get("ballot")
    after = f" after ballot {ballot}" if ballot is not None else ""
    splits = f"{report['splits']} times " if report.get("splits") is not None else ""
    about = ", ".join(
        ([f"seed {report['seed']}"] if report.get("seed") is not None else [])
        + ([f"{report['voters']} voters"] if report.get("voters") is not None else [])
    )
    lines = [
        f"Split-half reliability{after}{' (final)' if report.get('final') else ''}: the voters "
        f"split at random into two halves {splits}{f'({about}), ' if about else ''}each half "
        "rescored, the two rankings correlated; the mean correlation of half crowds is corrected "
        "to the whole crowd by Spearman-Brown, its range over the splits (2.5-97.5%) likewise.",
        f"- Spearman rho: {_interval(half.get('rho'))}",
        f"- rho_w (top-weighted): {_interval(half.get('rho_w'))}",
    ]
    macro = half.get("macro")
    if isinstance(macro, dict) and isinstance(macro.get("rho"), dict):
        lines.append(f"- per target, macro rho: {_interval(macro['rho'])}")
    votes = f" ({alpha['votes']:,} votes)" if _number(alpha.get("votes")) else ""
    lines.append(
        f"- Krippendorff's alpha (nominal, each pair both ways round): {alpha_text(alpha)}{votes}"
    )
    return lines


def settled_lines(report: dict[str, Any] | None) -> list[str]:
    """The settled top: for each k, the expected overlap with the true top k."""
    tops = report.get("settled_top") if isinstance(report, dict) else None
    tops = [t for t in tops if isinstance(t, dict) and "k" in t] if isinstance(tops, list) else []
    if not tops:
        return ["Not computed for this study."]
    threshold = (report or {}).get("threshold") or 0.95
    lines = []
    for top in tops:
        doubt = top.get("in_doubt") or 0
        verdict = (
            f"settled (every item at probability >= {threshold})"
            if top.get("settled")
            else f"{doubt} item{'s' if doubt != 1 else ''} in doubt"
        )
        expected = top.get("expected")
        spread = interval_text(top.get("interval"))
        right = (
            f"expected {expected:.1f} of {top['k']} right{spread}"
            if _number(expected)
            else "not computed"
        )
        lines.append(f"- top {top['k']}: {right}; {verdict}")
    return lines
