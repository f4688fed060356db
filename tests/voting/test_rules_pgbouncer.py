"""Every voting rule of test_rules.py again, through PgBouncer in transaction pooling.

The rule tests are collected here a second time (their names are the same: this module's are the
"pgbouncer" run, test_rules.py's the direct one), with this process's Django connection pointed at
a real pgbouncer (tests/pgbouncer.py): the common vote and each refusal of collector_vote_v5
(unknown_voter, wrong_study, no_comparison, answered_differently, answered_by_other,
tie_not_allowed, voided, ballot_closed, not_leased, quota_reached) commit through the pooler, one
transaction per statement, as behind a deployed PgBouncer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from collector.voting.store import REFUSALS
from tests.voting import test_rules

pytestmark = pytest.mark.django_db(transaction=True)

RULE_TESTS = {name: test for name, test in vars(test_rules).items() if name.startswith("test_")}
globals().update(RULE_TESTS)


@pytest.fixture(autouse=True)
def _every_test_here_goes_through_pgbouncer(through_pgbouncer):
    """The rule tests' ORM calls and votes reach PostgreSQL through PgBouncer."""
    return through_pgbouncer


def test_the_rule_tests_check_every_refusal_of_the_vote_function():
    """Each refusal is asserted by its reason, or by its status where that is the reason's own."""
    source = Path(test_rules.__file__).read_text()
    unchecked = [
        reason
        for reason, (status, _detail) in REFUSALS.items()
        if f'"{reason}"' not in source and f"status_code == {status}" not in source
    ]
    assert unchecked == []
