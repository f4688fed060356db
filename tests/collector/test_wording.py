"""What the pages, figures and the card say of their numbers: counts in the singular or plural,
shares that never round to 100% or 0%, withdrawn voters apart from excluded ones, planned
comparisons against answered ones after a deletion, the redirect template as text, the one
ballot so far of several, and a figure's legend off its points."""

from __future__ import annotations

import json

import pytest
from django.template import Context, Template

from collector import jobs, wording
from collector.models import Ballot, Comparison, Voter
from collector.participants.forgetting import forget_voter
from collector.releases import card as cards
from collector.reports import figures as study_figures
from collector.studies import lifecycle
from collector.studies.designs import study_design
from collector.voting import store
from tests.factories import finished_study, make_study, simulate, staff_user
from tests.job_routes import on_send

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("share", "words"),
    [(0.999, "over 99%"), (1.0, "100%"), (0.001, "under 1%"), (0.0, "0%"), (0.876, "88%"),
     (0.5, "50%")],
)  # fmt: skip
def test_a_share_is_a_whole_percentage_that_says_all_or_none_only_when_it_is(share, words):
    assert wording.percent(share) == words
    rendered = Template("{% load wording %}{{ share|percent }}").render(Context({"share": share}))
    assert rendered == words


def test_a_count_takes_its_noun_in_the_singular_only_for_one():
    assert wording.count(1, "comparison") == "1 comparison"
    assert wording.count(0, "comparison") == "0 comparisons"
    assert wording.count(1200, "vote") == "1,200 votes"


def test_the_team_pages_error_summary_counts_its_errors(client):
    owner = staff_user(client)
    study = make_study(created_by=owner)
    response = client.post(
        f"/staff/{study.slug}/team/", {"action": "add", "username": "", "role": "viewer"}
    )
    assert response.status_code == 400
    assert "Nothing changed: 1 thing to fix" in response.content.decode()


def test_the_redirect_template_is_shown_as_text_not_a_link(client):
    owner = staff_user(client)
    template = "https://app.prolific.com/submissions/complete?cc={code}"
    study = make_study(created_by=owner, redirect_url=template)
    page = client.get(f"/staff/{study.slug}/").content.decode()
    assert f'<code class="redirect-template">{template}</code>' in page
    assert f'href="{template}"' not in page
    assert "each outcome's code in place of <code>{code}</code>" in page


def close_first_ballot(study, monkeypatch) -> None:
    on_send(monkeypatch, jobs.FINISH_CLOSE_JOB, lambda ballot_id: None)
    simulate(study)
    lifecycle.finish_close(study.ballots.get(number=1).pk)


def test_after_ballot_1_of_4_the_top_items_figure_says_so(monkeypatch):
    study = make_study(n_tokens=10, n_ballots=4, auto_open=True)
    close_first_ballot(study, monkeypatch)
    figure = study_figures.top_items(study)
    assert figure is not None
    assert figure.title.endswith("the top items' scores (after ballot 1 of 4)")
    assert "after ballot 1 of 4, best first" in figure.text and "one ballot" not in figure.text


def timed_votes(study, times_ms: list[list[int]]) -> None:
    """Browser voters, one per list, each answering with those response times."""
    for k, times in enumerate(times_ms):
        voter = Voter.objects.create(study=study, participant=f"t{k}", source="participant")
        for ms in times:
            comparison = store.next_comparison(voter)
            store.record_vote(voter, comparison.pk, "left", response_ms=ms)


def test_the_response_times_of_one_voter_name_their_one_median():
    study = make_study(n_tokens=8)
    timed_votes(study, [[2200, 2300, 2400]])
    figure = study_figures.response_times(study)
    assert figure is not None
    assert "; the median is 2.3 s." in figure.text and "run from" not in figure.text


def test_equal_medians_are_not_a_range_and_different_ones_are():
    study = make_study(n_tokens=8)
    timed_votes(study, [[2300, 2300], [2250, 2350]])
    figure = study_figures.response_times(study)
    assert figure is not None and "every median is 2.3 s." in figure.text
    other = make_study(n_tokens=8)
    timed_votes(other, [[1000, 1000], [3000, 3000]])
    figure = study_figures.response_times(other)
    assert figure is not None and "their medians run from 1.0 s to 3.0 s." in figure.text


def test_the_rescaling_figures_legend_lies_off_its_points(monkeypatch):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    study = finished_study(monkeypatch)
    (figure,) = study_figures.rescaling(study)
    fig = figure.figure
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    plot = fig.axes[0].get_window_extent(renderer)
    assert not box.overlaps(plot), (box, plot)
    assert [t.get_text() for t in legend.get_texts()][0].startswith("1 - ybar = b (1 - x)")


def test_after_a_deletion_the_ballots_table_gives_answered_of_all_planned(client, monkeypatch):
    study = finished_study(monkeypatch, created_by=staff_user(client))
    first = study.ballots.get(number=1)
    planned = Comparison.objects.filter(ballot=first).count()
    voter = Voter.objects.filter(votes__ballot=first).distinct().first()
    theirs = voter.votes.filter(ballot=first).count()
    assert forget_voter(voter.pk) is not None
    answered = Comparison.objects.filter(ballot=first, status="answered").count()
    assert theirs > 0 and answered == planned - theirs
    page = client.get(f"/staff/{study.slug}/").content.decode()
    assert f'<span class="count">{answered:,} / {planned:,}</span>' in page
    live = json.loads(client.get(f"/staff/{study.slug}/live.json").content)
    row = next(b for b in live["ballots"] if b["number"] == 1)
    assert (row["answered"], row["total"]) == (answered, planned)
    assert study.ballots.get(number=1).status == Ballot.Status.CLOSED


def test_the_card_says_withdrawn_voters_withdrew_and_were_not_excluded(monkeypatch):
    study = finished_study(monkeypatch)
    voters = list(Voter.objects.filter(votes__ballot__study=study).distinct()[:2])
    for voter in voters:
        assert forget_voter(voter.pk) is not None
    counted = cards.exclusions(study)
    assert counted["voters"] == 0 and counted["withdrawn"] == 2
    lines = cards.exclusion_lines(counted)
    assert lines[0] == "No voter was excluded."
    assert lines[1].startswith("2 voters withdrew: their data was deleted at their request")
    assert not any("Their 0 votes" in line for line in lines)


def test_an_excluded_voter_and_their_votes_are_counted_in_the_singular():
    lines = cards.exclusion_lines(
        {"voters": 1, "votes_kept_marked": 1, "votes_voided": 0, "withdrawn": 1}
    )
    assert lines[0].startswith("1 voter was excluded. Their 1 vote in ballots closed before")
    assert "0 votes of open ballots were voided" in lines[0]
    assert lines[1].startswith("1 voter withdrew:")


def test_the_card_names_the_design_without_parentheses_in_parentheses():
    design = study_design(make_study())
    described = cards.design_text(
        {"described": design.describe(), "title": design.title, "summary": design.summary}
    )
    assert described.startswith("adaptive: Adaptive (the paper's design). Every ballot pairs")
    assert "((" not in described and "design)" in described and "):" not in described


def test_the_voters_page_calls_a_voter_whose_data_was_deleted_withdrawn(client, monkeypatch):
    study = finished_study(monkeypatch, created_by=staff_user(client))
    voter = Voter.objects.filter(votes__ballot__study=study).distinct().first()
    client.post(f"/staff/{study.slug}/voters/{voter.pseudonym}/exclude/")
    other = Voter.objects.filter(votes__ballot__study=study).exclude(pk=voter.pk).first()
    assert forget_voter(other.pk) is not None
    page = client.get(f"/staff/{study.slug}/voters/").content.decode()
    assert "1 excluded, 1 withdrawn (their data deleted at their request)." in page
    assert "withdrawn: data deleted at the participant&#x27;s request" in page
    assert "excluded: data deleted" not in page
