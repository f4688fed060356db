"""Reading a study's votes export (``votes.csv``) against its ranking."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..ballots.replay import StudyVotes
from .gold import GoldStandard
from .lines import InputFileError, read_csv_table

__all__ = ["read_votes"]

_CHOICES = {"left": 1.0, "right": 0.0, "tie": 0.5}
_VOTE_COLUMNS = ("ballot", "item_left", "item_right", "choice", "voter")


def read_votes(path: str | Path, gold: GoldStandard) -> StudyVotes:
    """Read a study's votes export, its item ids matched to ``gold`` (the study's ranking).

    Ballot ``k`` holds the items with ``last_ballot >= k`` in the ranking export, and any
    item voted on in it (when the ranking has no ``last_ballot``: the items voted on in
    ballot ``k`` or later, ballots being nested). Votes marked ``voter_excluded`` (the votes
    export of an excluded voter) are left out. With a target study's ranking the votes carry
    its targets as groups (:attr:`ranking.files.GoldStandard.groups`): they are rescored per
    target, as the study scored them.

    Raises
    ------
    InputFileError
        With the line at fault: missing columns, an unknown item id, a choice other than
        left/right/tie, a bad ballot number, a self-comparison.
    """
    columns, rows = read_csv_table(path, _VOTE_COLUMNS, "votes")
    col = [columns[c] for c in _VOTE_COLUMNS]
    # The product's export marks the votes of excluded voters: they are left out here.
    excluded_col = columns.get("voter_excluded")
    position = {int(i): p for p, i in enumerate(gold.item_ids.tolist())}
    voters: dict[str, int] = {}
    ballots: list[int] = []
    lefts: list[int] = []
    rights: list[int] = []
    scores: list[float] = []
    who: list[int] = []
    for number, row in rows:
        if excluded_col is not None and row[excluded_col].strip().lower() in ("true", "1"):
            continue
        ballot_text, left_text, right_text, choice, voter = (row[c].strip() for c in col)
        try:
            ballot = int(ballot_text)
            left, right = position[int(left_text)], position[int(right_text)]
        except (ValueError, KeyError):
            raise InputFileError(
                path,
                f"ballot and item ids must be integers of the ranking's items, got "
                f"{ballot_text!r}, {left_text!r}, {right_text!r}",
                number,
            ) from None
        if ballot < 1:
            raise InputFileError(path, f"ballot numbers start at 1, got {ballot}", number)
        if left == right:
            raise InputFileError(path, "a vote compares an item with itself", number)
        if choice not in _CHOICES:
            raise InputFileError(path, f"choice must be left, right or tie, got {choice!r}", number)
        ballots.append(ballot - 1)
        lefts.append(left)
        rights.append(right)
        scores.append(_CHOICES[choice])
        who.append(voters.setdefault(voter, len(voters)))
    if not ballots:
        raise InputFileError(path, "holds no votes")
    ballot_of = np.asarray(ballots, dtype=np.int64)
    pairs = np.column_stack([lefts, rights]).astype(np.int64)
    n = gold.n_items
    k = int(ballot_of.max()) + 1
    if gold.last_ballot is not None:
        k = max(k, int(gold.last_ballot.max()))
    members = []
    for index in range(k):
        inside = np.zeros(n, dtype=bool)
        later = ballot_of >= index if gold.last_ballot is None else ballot_of == index
        inside[pairs[later].ravel()] = True
        if gold.last_ballot is not None:
            inside |= gold.last_ballot >= index + 1
        members.append(np.flatnonzero(inside))
    try:
        return StudyVotes(
            n_items=n,
            ballot=ballot_of,
            pairs=pairs,
            first_score=np.asarray(scores),
            voter=np.asarray(who, dtype=np.int64),
            ballot_items=tuple(members),
            voter_names=tuple(voters),
            groups=gold.groups,  # a target study's ballots are rescored per target
        )
    except ValueError as error:
        raise InputFileError(path, str(error)) from None
