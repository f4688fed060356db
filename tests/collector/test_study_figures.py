"""A study's figures: on the staff page as SVG with titles, and as files from the command."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.db.models import F

from collector.models import Vote
from collector.staff import study_figures
from tests.collector.helpers import finished_study, staff_user
from tests.factories import make_study

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def finished(client, monkeypatch):
    study = finished_study(monkeypatch, n_ballots=3, created_by=staff_user(client), slug="figs")
    # The simulated crowd answers instantly: give its votes response times, as browsers send.
    Vote.objects.update(response_ms=500 + (F("id") * 7919) % 4000)
    return study


def test_a_finished_study_has_every_figure_each_with_a_title_and_a_text(finished):
    names = [f.name for f in study_figures.study_figures(finished)]
    assert names == [
        "votes", "rescaling-2", "rescaling-3", "top-items", "top-ranking", "response-times",
    ]  # fmt: skip
    for figure in study_figures.study_figures(finished):
        svg = figure.svg()
        assert svg.startswith("<svg") and f"<title>{figure.title}</title>" in svg
        assert len(figure.text) > 40


def test_the_figures_page_shows_them_inline_with_their_captions(client, finished):
    page = client.get("/staff/figs/figures/").content.decode()
    assert page.count("<svg") == 6 and page.count("<figcaption>") == 6
    assert "slope b = " in page and "95% intervals" in page
    png = client.get("/staff/figs/figures/top-ranking.png")
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
    assert client.get("/staff/figs/figures/top-ranking.gif").status_code == 404
    assert client.get("/staff/figs/figures/nothing.svg").status_code == 404


def test_the_command_writes_every_figure_as_a_pdf(finished, tmp_path):
    out = io.StringIO()
    call_command("study_figures", "figs", "--out", str(tmp_path), stdout=out)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 6 and all(f.endswith(".pdf") for f in files)
    assert all((tmp_path / f).read_bytes().startswith(b"%PDF") for f in files)


def test_a_study_without_votes_has_no_figure_and_the_command_says_so(tmp_path):
    study = make_study(slug="empty")
    assert study_figures.study_figures(study) == []
    with pytest.raises(CommandError, match="no votes yet"):
        call_command("study_figures", study.slug, "--out", str(tmp_path))
