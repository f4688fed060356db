"""A study's figures: on the staff page as SVG with titles, and as files from the command."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.db.models import F

from collector.models import Vote
from collector.reports import figures as study_figures
from collector.studies import reliability
from tests.factories import finished_study, make_study, staff_user

pytestmark = pytest.mark.django_db(transaction=True)

LONG_NAME = "Sales and marketing relatedness, spring pilot with the extended token list"


@pytest.fixture
def finished(client, monkeypatch):
    study = finished_study(
        monkeypatch, n_ballots=3, created_by=staff_user(client), slug="figs", name=LONG_NAME
    )
    # The simulated crowd answers instantly: give its votes response times, as browsers send.
    Vote.objects.update(response_ms=500 + (F("id") * 7919) % 4000)
    reliability.store_report(study.pk, 3)  # the settled top's figure reads it
    return study


def test_a_finished_study_has_every_figure_each_with_a_title_and_a_text(finished):
    names = [f.name for f in study_figures.study_figures(finished)]
    assert names == [
        "votes", "rescaling-2", "rescaling-3", "top-items", "top-ranking", "settled-top",
        "response-times",
    ]  # fmt: skip
    for figure in study_figures.study_figures(finished):
        svg = figure.svg()
        assert svg.startswith("<svg") and f"<title>{figure.title}</title>" in svg
        assert len(figure.text) > 40


def test_the_figures_page_shows_them_inline_with_their_captions(client, finished):
    page = client.get("/staff/figs/figures/").content.decode()
    assert page.count("<svg") == 7 and page.count("<figcaption>") == 7
    assert "slope b = " in page and "95% intervals" in page
    png = client.get("/staff/figs/figures/top-ranking.png")
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
    assert client.get("/staff/figs/figures/top-ranking.gif").status_code == 404
    assert client.get("/staff/figs/figures/nothing.svg").status_code == 404


def test_the_command_writes_every_figure_as_a_pdf(finished, tmp_path):
    out = io.StringIO()
    call_command("study_figures", "figs", "--out", str(tmp_path), stdout=out)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 7 and all(f.endswith(".pdf") for f in files)
    assert all((tmp_path / f).read_bytes().startswith(b"%PDF") for f in files)


def test_a_study_without_votes_has_no_figure_and_the_command_says_so(tmp_path):
    study = make_study(slug="empty")
    assert study_figures.study_figures(study) == []
    with pytest.raises(CommandError, match="no votes yet"):
        call_command("study_figures", study.slug, "--out", str(tmp_path))


def test_nothing_of_any_figure_is_cut_off_even_under_a_long_study_name(finished):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    for figure in study_figures.study_figures(finished):
        fig = figure.figure
        canvas = FigureCanvasAgg(fig)
        canvas.draw()  # lays the figure out as saving it does
        drawn = fig.get_tightbbox(canvas.get_renderer())  # inches: what is drawn, text included
        width, height = fig.get_size_inches()
        assert drawn.x0 >= -0.01 and drawn.x1 <= width + 0.01, (figure.name, drawn)
        assert drawn.y0 >= -0.01 and drawn.y1 <= height + 0.01, (figure.name, drawn)
        title = fig.get_suptitle().replace("\n", " ")
        assert title == figure.title
        assert LONG_NAME in title or figure.name.startswith("rescaling-")


def test_the_response_times_plot_the_most_active_timed_voters_and_say_how_many(monkeypatch):
    from collector.models import Voter
    from collector.voting import store
    from tests.factories import simulate

    study = make_study(n_tokens=12, m=6, slug="timed")
    simulate(study, limit=60)  # simulated voters: many votes, no response time
    for k, votes in enumerate([2, 5, 1, 4, 3]):  # browser voters, timed
        voter = Voter.objects.create(study=study, participant=f"p{k}", source="participant")
        for j in range(votes):
            comparison = store.next_comparison(voter)
            store.record_vote(voter, comparison.pk, "left", response_ms=1000 * (k + 1) + j)
    monkeypatch.setattr(study_figures, "VOTERS_SHOWN", 3)
    figure = study_figures.response_times(study)
    assert figure is not None
    assert figure.title.endswith(
        "response times of the 3 most active of 5 voters with response times"
    )
    labels = [t.get_text() for t in figure.figure.axes[0].get_xticklabels()]
    pseudonyms = dict(Voter.objects.values_list("participant", "pseudonym"))
    assert labels == [
        f"{pseudonyms['p1']} (5)",
        f"{pseudonyms['p3']} (4)",
        f"{pseudonyms['p4']} (3)",
    ]
    assert "(5, 4, 3 votes)" in figure.text
    assert "8 other voters have no response time (simulated votes" in figure.text
    monkeypatch.setattr(study_figures, "VOTERS_SHOWN", 30)
    figure = study_figures.response_times(study)
    assert figure.title.endswith("response times of all 5 voters with response times")
    assert len(figure.figure.axes[0].get_xticklabels()) == 5


def drawn_labels(axis) -> list[str]:
    """An axis's tick labels as drawn (matplotlib formats them when the figure is drawn)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(axis.get_figure(root=True)).draw()
    ticks = axis.get_ticklabels() + axis.get_ticklabels(minor=True)
    return [t.get_text() for t in ticks if t.get_text()]


def test_the_response_times_axis_reads_plain_seconds_and_its_voters_are_legible(monkeypatch):
    from collector.models import Voter
    from collector.voting import store

    study = make_study(n_tokens=12, m=6, slug="narrow")
    # Every time between 1.9 s and 2.5 s: matplotlib would write 2.2x10^0 on a log axis.
    for k in range(3):
        voter = Voter.objects.create(study=study, participant=f"q{k}", source="participant")
        for j in range(4):
            comparison = store.next_comparison(voter)
            store.record_vote(voter, comparison.pk, "left", response_ms=1900 + 150 * j + 10 * k)
    figure = study_figures.response_times(study)
    assert figure is not None
    ax = figure.figure.axes[0]
    seconds = drawn_labels(ax.yaxis)
    assert seconds and all(float(s) for s in seconds), seconds  # "2.2", not "$2.2\\times10^0$"
    assert {"2", "2.2", "2.4"} <= set(seconds)
    assert all(t.get_fontsize() >= 8 for t in ax.get_xticklabels())


def test_a_one_ballot_studys_top_items_are_a_dot_each_best_first(monkeypatch, client):
    study = finished_study(monkeypatch, n_ballots=3, design="round_robin", slug="rr",
                           created_by=staff_user(client))  # fmt: skip
    figure = study_figures.top_items(study)
    assert figure is not None and figure.title.endswith("the top items' scores (one ballot)")
    ax = figure.figure.axes[0]
    (dots,) = ax.get_lines()
    top = study.items.order_by("final_rank")[: study_figures.TOP_ITEMS]
    names = [f"{k}. {i.token_a.text} – {i.token_b.text}" for k, i in enumerate(top, 1)]
    assert [t.get_text() for t in ax.get_yticklabels()] == names
    scores = list(dots.get_xdata())
    assert len(scores) == len(names) and scores == sorted(scores, reverse=True)
    assert list(dots.get_ydata()) == list(range(1, len(names) + 1))
