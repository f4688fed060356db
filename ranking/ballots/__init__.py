"""The one ballot driver (every design, for the web application, the simulator and the
rescoring of stored votes) and a study's votes replayed.
"""

from __future__ import annotations

from .driver import (
    BallotDriver,
    BallotPlan,
    BallotScoring,
    Closed,
    Purpose,
    stream,
)
from .replay import (
    StudyVotes,
    rescore,
)

__all__ = [
    "BallotDriver",
    "BallotPlan",
    "BallotScoring",
    "Closed",
    "Purpose",
    "rescore",
    "stream",
    "StudyVotes",
]
