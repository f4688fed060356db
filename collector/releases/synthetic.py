"""How many of a release's votes came from the simulated crowd (``manage.py simulate_votes``:
its voters' source is ``simulated``), and the words every file of the release says it with.

The count is :func:`collector.evaluation.study_data.gold_provenance`'s, kept in the card as
``simulated`` (``votes``, ``simulated_votes``); the card, its Hugging Face metadata, the public
page, ``CITATION.cff`` and ``croissant.json`` all read it from there. A card written before it
was kept has none: :func:`sentence` is then None and the other functions say what they said.
"""

from __future__ import annotations

from typing import Any

from collector.evaluation.study_data import gold_provenance
from collector.models import Study, Voter

HUMAN_TYPE = "Crowdsourced pairwise comparisons"
SIMULATED_TYPE = "Simulated pairwise comparisons (a simulated crowd, no people)"
SIMULATOR = (
    "The simulated crowd of manage.py simulate_votes: software voters answering each comparison "
    "from known similarities with noise (ranking.simulation), no people."
)


def counted(study: Study) -> dict[str, int]:
    """The study's votes and how many of them the simulated crowd gave."""
    found = gold_provenance(study)
    return {"votes": found["votes"], "simulated_votes": found["simulated_votes"]}


def _counts(card: dict[str, Any]) -> tuple[int, int] | None:
    block = card.get("simulated")
    if not isinstance(block, dict):
        return None
    return int(block.get("simulated_votes") or 0), int(block.get("votes") or 0)


def share(card: dict[str, Any]) -> str:
    """``none``, ``some`` or ``all`` of the votes from the simulated crowd (an old card:
    ``none``)."""
    found = _counts(card)
    if found is None or found[0] == 0:
        return "none"
    return "all" if found[0] >= found[1] else "some"


def sentence(card: dict[str, Any]) -> str | None:
    """How many votes came from the simulated crowd, in words (None: not counted)."""
    found = _counts(card)
    if found is None:
        return None
    simulated, votes = found
    if not simulated:
        return f"All {votes:,} votes come from people; none from a simulated crowd."
    which = f"All {votes:,}" if simulated >= votes else f"{simulated:,} of the {votes:,}"
    people = "" if simulated >= votes else f"; the other {votes - simulated:,} from people"
    return (
        f"Simulated data: {which} votes come from a simulated crowd (software voting with "
        f"known similarities, manage.py simulate_votes), not from people{people}. A ranking of "
        "simulated votes follows the simulator, not human judgement."
    )


def annotations_creators(card: dict[str, Any]) -> list[str]:
    """The Hugging Face card's ``annotations_creators``."""
    return {"none": ["crowdsourced"], "some": ["crowdsourced", "machine-generated"],
            "all": ["machine-generated"]}[share(card)]  # fmt: skip


def collection_types(card: dict[str, Any]) -> list[str]:
    """Croissant's ``rai:dataCollectionType``."""
    return {"none": [HUMAN_TYPE], "some": [HUMAN_TYPE, SIMULATED_TYPE],
            "all": [SIMULATED_TYPE]}[share(card)]  # fmt: skip


def keywords(card: dict[str, Any]) -> list[str]:
    """The keywords of CITATION.cff and croissant.json."""
    found = share(card)
    return (
        ["relatedness", "pairwise comparison"]
        + (["crowdsourcing"] if found != "all" else [])
        + (["simulated data"] if found != "none" else [])
        + ["ranking"]
    )


def voters_words(card: dict[str, Any]) -> str:
    """The voters counted, with the simulated ones said: ``102 simulated voters``, ``102 voters
    (40 simulated)``, ``102 voters``."""
    crowd = card["crowd"]
    n = crowd["voters"]
    simulated = crowd["sources"].get(Voter.Source.SIMULATED.label, 0)
    if simulated and simulated >= n:
        return f"{n:,} simulated voters"
    return f"{n:,} voters ({simulated:,} simulated)" if simulated else f"{n:,} voters"
