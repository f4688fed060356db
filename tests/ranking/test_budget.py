"""Study planning (Eqs. 3, 4, 10; Section 2.7) and its command line."""

from __future__ import annotations

import json

import pytest

from ranking import plan_study
from ranking.plan import main
from ranking.protocol import ballot_comparisons, comparisons_per_ballot, uniform_m


def test_the_papers_run_needs_19660_comparisons() -> None:
    plan = plan_study(990, 7, 0.5, 20)
    assert plan.items_per_ballot == [990, 495, 248, 124, 62, 31, 16]
    assert plan.comparisons_per_ballot == [9900, 4950, 2480, 1240, 620, 310, 160]
    assert plan.total_comparisons == 19_660
    assert plan.m_top == 140
    assert plan.m_unif == pytest.approx(2 * 19_660 / 990)
    assert plan.uniform_m == 40 == uniform_m(990, 7, 0.5, 20)
    assert plan.uniform_comparisons == 19_800
    assert plan.person_hours is None
    assert plan.warnings == []


def test_an_odd_ballot_rounds_comparisons_up() -> None:
    # 5 items x 3 comparisons: one item appears 4 times (footnote 6), 8 comparisons.
    assert comparisons_per_ballot(5, 0.5, 2, 3) == [8, 5]
    assert [ballot_comparisons(5, 3), ballot_comparisons(4, 3), ballot_comparisons(0, 3)] == [
        8,
        6,
        0,
    ]


def test_the_cost_is_time_per_comparison_times_comparisons() -> None:
    plan = plan_study(990, 7, 0.5, 20, seconds_per_comparison=12)
    assert plan.person_hours == pytest.approx(12 * 19_660 / 3600)


@pytest.mark.parametrize(
    ("parameters", "fragment"),
    [
        ((500, 1, 0.5, 200), "at least 2 ballots"),
        ((100_000, 12, 0.6, 20), "more than about 10 ballots"),
        ((990, 3, 0.5, 50), "above 0.1^(1/(n_b-1))"),
        ((10, 3, 0.44, 30), "below (2/N_items)^(1/(n_b-1))"),
        ((990, 7, 0.5, 10), "M_top = n_b * M = 70"),
        ((990, 7, 0.5, 10), "N_comp = 9,830 is below"),
    ],
)
def test_it_warns_about_each_broken_bound(parameters: tuple, fragment: str) -> None:
    warnings = plan_study(*parameters).warnings
    assert any(fragment in warning for warning in warnings), warnings


def test_a_plan_is_plain_data_for_web_pages() -> None:
    data = plan_study(990, 7, 0.5, 20, 10).as_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["total_comparisons"] == 19_660


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ((990, 7, 0.5, 0), "m must be at least 1"),
        ((990, 0, 0.5, 20), "n_ballots"),
        ((990, 7, 1.2, 20), "alpha"),
        ((990, 7, 0.5, 20, 0), "seconds_per_comparison"),
    ],
)
def test_plan_study_rejects_invalid_parameters(arguments: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        plan_study(*arguments)


def test_the_command_line_prints_a_readable_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--items", "990", "--ballots", "7", "--alpha", "0.5", "--m", "20"]) == 0
    out = capsys.readouterr().out
    assert "Comparisons in all (Eq. 3):       19,660" in out
    assert "M = 40 (19,800 comparisons)" in out
    assert "All bounds of Section 2.7 are met." in out


def test_the_command_line_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--items", "990", "--ballots", "7", "--alpha", "0.5", "--m", "20", "--json"])
    assert json.loads(capsys.readouterr().out)["m_top"] == 140


def test_the_command_line_refuses_bad_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--items", "990", "--ballots", "7", "--alpha", "2", "--m", "20"])
    assert exit_info.value.code == 2
    assert "alpha must lie strictly between 0 and 1" in capsys.readouterr().err
