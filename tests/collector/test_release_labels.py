"""A release says what it is: how many of its votes came from the simulated crowd (in every
file and on its public page; releasing them needs an explicit confirmation), who made it
(authors required, as CFF persons with their ORCID iDs), its page's address (PUBLIC_URL), a card
whose typed title and authors render as typed, and a zip whose files unpack readable by all."""

from __future__ import annotations

import json
import re
import stat
import subprocess
import zipfile

import mlcroissant as mlc
import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from huggingface_hub import DatasetCard
from markdown_it import MarkdownIt

from collector.models import Release, Study, Vote, Voter
from collector.releases import building, releasing
from tests.collector.release_helpers import load_with_datasets, release

pytestmark = pytest.mark.django_db

PUBLIC_URL = "https://relatedness.example.org"


@pytest.fixture(autouse=True)
def public_url(settings, releases_dir):
    settings.PUBLIC_URL = PUBLIC_URL


def people_voted(study: Study, share: float) -> tuple[int, int]:
    """Make the first ``share`` of the study's voters Prolific participants (as if people had
    cast their votes); returns (simulated votes, all votes), counted afresh."""
    voters = list(Voter.objects.filter(study=study).order_by("id").values_list("pk", flat=True))
    people = voters[: round(len(voters) * share)]
    Voter.objects.filter(pk__in=people).update(source=Voter.Source.PROLIFIC)
    votes = Vote.objects.filter(ballot__study=study)
    return votes.filter(voter__source=Voter.Source.SIMULATED).count(), votes.count()


def bundle(tmp_path, slug: str, *args: str, synthetic: bool = True):
    """Release ``slug`` 1.0.0 (public) to ``tmp_path/out``; its card, CITATION.cff, Croissant
    document (as JSON and as mlcroissant reads it) and README text."""
    out = tmp_path / "out"
    release(slug, "1.0.0", "--public", *args, out=out, synthetic=synthetic)
    readme = (out / "README.md").read_text()
    return {
        "out": out,
        "readme": readme,
        "hub": DatasetCard.load(out / "README.md").data,
        "cff": yaml.safe_load((out / "CITATION.cff").read_text()),
        "croissant": json.loads((out / "croissant.json").read_text()),
        "metadata": mlc.Dataset(jsonld=out / "croissant.json").metadata,
    }


def body_lines(readme: str) -> list[str]:
    """The card's Markdown lines after its YAML front matter, blank lines left out."""
    return [line for line in readme.split("---\n", 2)[2].splitlines() if line.strip()]


def test_a_release_of_simulated_votes_says_so_in_every_file_and_on_its_page(
    finished, tmp_path, client
):
    simulated, votes = people_voted(finished, 0.0)
    assert simulated == votes > 0
    said = f"All {votes:,} votes come from a simulated crowd"
    voters = Voter.objects.filter(study=finished, votes__isnull=False).distinct().count()
    got = bundle(tmp_path, finished.slug)
    assert said in body_lines(got["readme"])[1]  # the card's first line after its title
    assert got["hub"].annotations_creators == ["machine-generated"]
    assert "crowdsourced" not in got["hub"].tags
    assert said in got["cff"]["abstract"] and f"{voters} simulated voters" in got["cff"]["abstract"]
    assert "crowdsourcing" not in got["cff"]["keywords"]
    metadata = got["metadata"]
    assert said in metadata.data_collection
    assert metadata.data_collection_type == [
        "Simulated pairwise comparisons (a simulated crowd, no people)"
    ]
    assert said in metadata.annotator_demographics[0]
    assert "manage.py simulate_votes" in metadata.machine_annotation_tools[0]
    dataset = json.loads((got["out"] / "dataset.json").read_text())["simulated"]
    assert (dataset["votes"], dataset["simulated_votes"], dataset["simulated"]) == (
        votes,
        votes,
        True,
    )
    assert f"all {votes:,} votes of this study come from a simulated crowd" in dataset["warning"]
    client.logout()
    page = client.get(f"/d/{finished.slug}/1.0.0/").content.decode()
    assert f'<p class="simulated" role="note">Simulated data: {said}' in page


def test_a_mixed_crowd_is_counted_and_labelled_both_crowdsourced_and_machine_generated(
    finished, tmp_path, client
):
    simulated, votes = people_voted(finished, 0.5)
    assert 0 < simulated < votes
    said = f"{simulated:,} of the {votes:,} votes come from a simulated crowd"
    got = bundle(tmp_path, finished.slug)
    assert said in body_lines(got["readme"])[1]
    assert f"the other {votes - simulated:,} from people" in body_lines(got["readme"])[1]
    assert got["hub"].annotations_creators == ["crowdsourced", "machine-generated"]
    assert said in got["cff"]["abstract"]
    assert len(got["metadata"].data_collection_type) == 2
    assert said in got["croissant"]["description"]
    dataset = json.loads((got["out"] / "dataset.json").read_text())["simulated"]
    assert (dataset["votes"], dataset["simulated_votes"]) == (votes, simulated)
    client.logout()
    assert said in client.get(f"/d/{finished.slug}/1.0.0/").content.decode()


def test_a_crowd_of_people_needs_no_confirmation_and_its_release_says_none_is_simulated(
    finished, tmp_path, client
):
    simulated, votes = people_voted(finished, 1.0)
    assert simulated == 0
    got = bundle(tmp_path, finished.slug, synthetic=False)
    said = f"All {votes:,} votes come from people; none from a simulated crowd."
    assert said in got["readme"] and said in got["cff"]["abstract"]
    assert got["hub"].annotations_creators == ["crowdsourced"]
    assert "crowdsourcing" in got["cff"]["keywords"]
    assert got["metadata"].data_collection_type == ["Crowdsourced pairwise comparisons"]
    assert "rai:machineAnnotationTools" not in got["croissant"]
    client.logout()
    page = client.get(f"/d/{finished.slug}/1.0.0/").content.decode()
    assert said in page and 'class="simulated"' not in page


def test_simulated_votes_are_refused_without_the_confirmation_and_nothing_is_written(
    finished, releases_dir, client
):
    with pytest.raises(CommandError, match=r"come from the simulated crowd.*--synthetic"):
        release(finished.slug, "1.0.0", synthetic=False)
    form = {"version": "1.0.0", "licence": "CC-BY-4.0", "authors": "Lovelace, Ada"}
    page = client.get(f"/staff/{finished.slug}/releases/").content.decode()
    assert 'name="synthetic"' in page and "come from the simulated crowd" in page
    refused = client.post(f"/staff/{finished.slug}/releases/", form)
    assert refused.status_code == 400
    assert "confirm that it holds simulated votes" in refused.context["form"].errors["synthetic"][0]
    assert not Release.objects.exists() and not any(releases_dir.rglob("*.zip"))
    ticked = client.post(f"/staff/{finished.slug}/releases/", {**form, "synthetic": "on"})
    assert ticked.status_code == 302 and Release.objects.count() == 1


def test_the_form_asks_no_confirmation_of_a_study_without_simulated_votes(finished, client):
    people_voted(finished, 1.0)
    response = client.get(f"/staff/{finished.slug}/releases/")
    page = response.content.decode()
    assert response.status_code == 200 and 'name="version"' in page  # the form is there
    assert 'name="synthetic"' not in page


@pytest.mark.parametrize("authors", ["", " ; ;  "])
def test_a_release_without_authors_is_refused_on_the_form_and_the_command_line(
    finished, client, authors
):
    form = {"version": "1.0.0", "licence": "CC-BY-4.0", "authors": authors, "synthetic": "on"}
    response = client.post(f"/staff/{finished.slug}/releases/", form)
    assert response.status_code == 400
    assert "name the release's authors" in response.context["form"].errors["authors"][0].lower()
    with pytest.raises(CommandError, match="authors"):
        release(finished.slug, "1.0.0", "--authors", authors)
    with pytest.raises(CommandError, match="required: --authors"):
        call_command("release_study", finished.slug, "--version", "1.0.0", "--license",
                     "CC-BY-4.0", "--synthetic")  # fmt: skip
    assert not Release.objects.exists()


def test_authors_become_cff_persons_with_their_orcid_and_an_entity_stays_a_name(finished, tmp_path):
    typed = "Carberry, Josiah, 0000-0002-1825-0097; Hopper, Grace; Ada Lovelace; ACME"
    got = bundle(tmp_path, finished.slug, "--authors", typed)
    assert got["cff"]["authors"] == [
        {"family-names": "Carberry", "given-names": "Josiah",
         "orcid": "https://orcid.org/0000-0002-1825-0097"},
        {"family-names": "Hopper", "given-names": "Grace"},
        {"family-names": "Lovelace", "given-names": "Ada"},
        {"name": "ACME"},
    ]  # fmt: skip
    creators = got["croissant"]["creator"]
    assert creators[0]["sameAs"] == "https://orcid.org/0000-0002-1825-0097"
    assert creators[3] == {"@type": "sc:Organization", "name": "ACME"}
    assert [c.name for c in got["metadata"].creators] == [
        "Josiah Carberry", "Grace Hopper", "Ada Lovelace", "ACME"
    ]  # fmt: skip
    assert "Authors: Carberry, Josiah; Hopper, Grace; Lovelace, Ada; ACME." in got["readme"]


@pytest.mark.parametrize(
    ("authors", "message"),
    [("Carberry, Josiah, 0000-0002-1825-0098", "check digit"),
     ("ACME, 0000-0002-1825-0097", "belongs to a person"),
     ("Smith, John, Jr.", "Family, Given")],
)  # fmt: skip
def test_an_author_the_citation_cannot_hold_is_refused(finished, client, authors, message):
    with pytest.raises(CommandError, match=message):
        release(finished.slug, "1.0.0", "--authors", authors)
    form = {"version": "1.0.0", "licence": "CC-BY-4.0", "authors": authors, "synthetic": "on"}
    response = client.post(f"/staff/{finished.slug}/releases/", form)
    assert response.status_code == 400 and message in response.context["form"].errors["authors"][0]
    assert not Release.objects.exists()


def test_the_cards_title_and_authors_render_as_typed_in_markdown_and_html(finished, tmp_path):
    title = "Top *terms* <script>alert(1)</script> [see](javascript:alert(2)) #1 a_b & c"
    author = "O'Neil <b>Cathy</b>"
    got = bundle(tmp_path, finished.slug, "--title", title, "--authors", author)
    tokens = MarkdownIt("commonmark", {"html": True}).parse(got["readme"].split("---\n", 2)[2])
    heading = tokens[tokens.index(next(t for t in tokens if t.type == "heading_open")) + 1]
    assert [c.type for c in heading.children] == ["text"] and heading.children[0].content == title
    rendered = MarkdownIt("commonmark", {"html": True}).render(got["readme"].split("---\n", 2)[2])
    assert "<script>" not in rendered and "<b>" not in rendered and "<em>" not in rendered
    assert 'href="javascript' not in rendered
    assert "&lt;b&gt;Cathy&lt;/b&gt;" in rendered
    assert got["hub"].pretty_name == title and got["cff"]["title"] == title
    loaded = load_with_datasets(got["out"], ["ranking"], tmp_path / "hf")
    assert loaded["ranking"]["rows"]


def test_a_public_release_gives_its_page_address_and_a_private_one_none(
    finished, tmp_path, settings
):
    got = bundle(tmp_path, finished.slug)
    page = f"{PUBLIC_URL}/d/{finished.slug}/1.0.0/"
    assert got["cff"]["url"] == page and got["croissant"]["url"] == page
    assert got["metadata"].url == page
    release(finished.slug, "1.1.0", out=tmp_path / "private")
    assert "url" not in yaml.safe_load((tmp_path / "private" / "CITATION.cff").read_text())
    assert "url" not in json.loads((tmp_path / "private" / "croissant.json").read_text())
    settings.PUBLIC_URL = ""
    with pytest.raises(CommandError, match="PUBLIC_URL"):
        release(finished.slug, "1.2.0", "--public")
    assert Release.objects.count() == 2


def test_a_build_whose_worker_has_no_public_address_fails_with_the_reason(
    finished, settings, releases_dir
):
    made = releasing.prepare(finished, version="1.0.0", licence="CC-BY-4.0",
                             authors="Lovelace, Ada", public=True, synthetic=True)  # fmt: skip
    settings.PUBLIC_URL = ""
    assert building.build(made.pk).endswith("failed: " + Release.objects.get().error)
    assert "PUBLIC_URL" in Release.objects.get().error
    assert Release.objects.get().status == Release.Status.FAILED
    assert not any(releases_dir.rglob("*.zip"))


def test_the_public_box_is_disabled_on_a_site_without_a_public_address(finished, client, settings):
    settings.PUBLIC_URL = ""
    page = client.get(f"/staff/{finished.slug}/releases/").content.decode()
    assert re.search(r'<input[^>]*name="public"[^>]*disabled', page)
    assert "PUBLIC_URL), which is not set" in page
    form = {"version": "1.0.0", "licence": "CC-BY-4.0", "authors": "Lovelace, Ada",
            "synthetic": "on", "public": "on"}  # fmt: skip
    assert client.post(f"/staff/{finished.slug}/releases/", form).status_code == 302
    assert Release.objects.get().public is False  # a disabled field keeps its initial value


def test_the_zips_files_unpack_readable_by_everyone(finished, tmp_path):
    release(finished.slug, "1.0.0", out=tmp_path / "out")
    archive = tmp_path / "out.zip"
    with zipfile.ZipFile(archive) as zf:
        modes = {info.filename: stat.S_IMODE(info.external_attr >> 16) for info in zf.infolist()}
    assert modes and set(modes.values()) == {0o644}
    unpacked = tmp_path / "unpacked"
    subprocess.run(["unzip", "-q", str(archive), "-d", str(unpacked)], check=True, timeout=60)
    files = [p for p in unpacked.rglob("*") if p.is_file()]
    assert len(files) == len(modes)
    assert {stat.S_IMODE(p.stat().st_mode) & 0o444 for p in files} == {0o444}


def test_a_release_written_before_votes_were_counted_by_origin_still_shows_its_page(
    finished, tmp_path, client
):
    release(finished.slug, "1.0.0", "--public")
    made = Release.objects.get()
    card = {k: v for k, v in made.card.items() if k != "simulated"}
    card["authors"] = ["Smith, John, Jr."]  # stored before authors were checked
    Release.objects.filter(pk=made.pk).update(card=card)
    client.logout()
    response = client.get(f"/d/{finished.slug}/1.0.0/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "Smith, John, Jr." in page and 'class="simulated"' not in page
