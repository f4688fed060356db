"""A citable release (manage.py release_study): the bundle that ``datasets`` and ``mlcroissant``
read, its citation file and checksums, immutable versions, and nothing of the voters but
pseudonyms."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import mlcroissant as mlc
import numpy as np
import pytest
from django.core.management.base import CommandError

from collector.exports import study_files
from collector.models import Release, Study, Vote, Voter
from collector.participants.forgetting import forget_voter
from collector.releases import citation, releasing
from collector.studies import reliability
from collector.studies.rescoring import rescore_without_withdrawn
from collector.voting.participant_ids import participant_key
from collector.voting.store import address_key
from tests.collector.release_helpers import load_with_datasets, release, sha256, sums
from tests.factories import finished_study, finished_target_study, make_study

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("releases_dir")]

# A report as collector.studies.reliability.latest_report returns it (its documented keys).
REPORT = {
    "ballot": 2, "final": True, "computed_at": "2026-11-27T10:00:00+00:00", "splits": 200,
    "seed": 11, "voters": 8, "resamples": 200,
    "split_half": {
        "rho": {"mean": 0.812, "corrected": 0.896, "low": 0.701, "high": 0.902,
                "corrected_low": 0.824, "corrected_high": 0.948},
        "rho_w": {"mean": 0.845, "corrected": 0.916, "low": 0.733, "high": 0.931,
                  "corrected_low": 0.846, "corrected_high": 0.964},
        "items": 45.0,
    },
    "alpha": {"alpha": 0.4321, "units": 17, "votes": 40, "unanimous": 0.999},
    "settled_top": [
        {"k": 10, "target": None, "custom": False, "expected": 8.6, "interval": [7, 10],
         "settled": False, "in_doubt": 3, "threshold": 0.95,
         "items": [{"item": "term 00 – term 01", "item_id": 0, "probability": 0.99}]},
        {"k": 5, "target": None, "custom": False, "expected": 4.9, "settled": True,
         "in_doubt": 0, "threshold": 0.95, "items": []},
    ],
    "threshold": 0.95,
}  # fmt: skip


@pytest.fixture
def finished(monkeypatch) -> Study:
    return finished_study(monkeypatch)


def test_release_study_writes_a_bundle_that_datasets_loads_as_ranking_and_votes(finished, tmp_path):
    out = tmp_path / "out"
    release(finished.slug, "1.0.0", "--authors", "Ada Lovelace; Hopper, Grace", out=out)
    loaded = load_with_datasets(out, ["ranking", "votes"], tmp_path / "hf")
    ranking = list(study_files.ranking_rows(finished))
    rows = loaded["ranking"]["rows"]
    assert [r["item_id"] for r in rows] == [r[1] for r in ranking]
    assert [(r["token_a"], r["token_b"]) for r in rows] == [(r[3], r[4]) for r in ranking]
    assert loaded["ranking"]["features"]["token_a"] == "Value('string')"
    votes = loaded["votes"]["rows"]
    assert len(votes) == Vote.objects.filter(ballot__study=finished).count()
    pseudonyms = set(Voter.objects.filter(study=finished).values_list("pseudonym", flat=True))
    assert {v["voter"] for v in votes} <= pseudonyms
    # The folder and the zip beside it hold the same files.
    with zipfile.ZipFile(tmp_path / "out.zip") as zf:
        names = {n.split("/", 1)[1] for n in zf.namelist()}
    assert names == {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert sha256(tmp_path / "out.zip") == Release.objects.get().zip_sha256


def test_tokens_that_look_like_numbers_stay_text_for_datasets(monkeypatch, tmp_path):
    tokens = "area,token\n" + "".join(f"Years,{1980 + i}\n" for i in range(8))
    study = make_study(tokens=tokens, n_ballots=2, auto_open=True)
    from tests.factories import finish_in_process

    finish_in_process(study, monkeypatch)
    release(study.slug, "1.0.0", out=tmp_path / "out")
    rows = load_with_datasets(tmp_path / "out", ["ranking"], tmp_path / "hf")["ranking"]["rows"]
    assert {r["token_a"] for r in rows} <= {str(1980 + i) for i in range(8)}


def test_mlcroissant_validates_the_metadata_and_reads_the_rankings_records(finished, tmp_path):
    out = tmp_path / "out"
    release(finished.slug, "1.0.0", out=out)
    document = json.loads((out / "croissant.json").read_text())
    assert document["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    for key in ("rai:dataCollection", "rai:annotatorDemographics",
                "rai:personalSensitiveInformation"):  # fmt: skip
        assert document[key], key
    dataset = mlc.Dataset(jsonld=out / "croissant.json")
    records = list(dataset.records(record_set="ranking"))
    ranking = list(study_files.ranking_rows(finished))
    assert [r["ranking/item_id"] for r in records] == [r[1] for r in ranking]
    assert [r["ranking/token_b"].decode() for r in records] == [r[4] for r in ranking]
    votes = list(dataset.records(record_set="votes"))
    assert len(votes) == Vote.objects.filter(ballot__study=finished).count()


def test_mlcroissant_refuses_a_data_file_whose_checksum_changed(finished, tmp_path):
    out = tmp_path / "out"
    release(finished.slug, "1.0.0", out=out)
    (out / "ranking.csv").chmod(0o644)
    with open(out / "ranking.csv", "a") as fh:
        fh.write("999,999,x,y,z,0,1,0,0,0,0,0\n")
    with pytest.raises(Exception, match="Download\\(ranking.csv\\)") as raised:
        list(mlc.Dataset(jsonld=out / "croissant.json").records(record_set="ranking"))
    causes, exc = [], raised.value
    while exc is not None:
        causes.append(str(exc))
        exc = exc.__cause__ or exc.__context__
    assert any("hash" in c.lower() or "sha256" in c.lower() for c in causes), causes


def test_the_citation_file_validates_against_the_cff_schema(finished, tmp_path):
    out = tmp_path / "out"
    release(finished.slug, "1.0.0", "--authors", "Ada Lovelace; Hopper, Grace; ACME Lab",
            "--title", "Sales relatedness", out=out)  # fmt: skip
    text = (out / "CITATION.cff").read_text()
    citation.validate(text)
    import yaml

    cff = yaml.safe_load(text)
    assert cff["authors"] == [
        {"family-names": "Lovelace", "given-names": "Ada"},
        {"family-names": "Hopper", "given-names": "Grace"},
        {"family-names": "Lab", "given-names": "ACME"},
    ]
    assert (cff["title"], cff["version"], cff["license"]) == ("Sales relatedness", "1.0.0",
                                                              "CC-BY-4.0")  # fmt: skip
    with pytest.raises(citation.InvalidCitation, match="authors"):
        citation.validate(text.replace("authors:", "authorz:"))


def test_sha256sums_lists_every_file_of_the_bundle_with_its_digest(finished, tmp_path):
    out = tmp_path / "out"
    release(finished.slug, "1.0.0", out=out)
    listed = sums(out)
    on_disk = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()} - {"SHA256SUMS"}
    assert set(listed) == on_disk
    assert {"ranking.csv", "ranking.jsonl", "votes.csv", "gold.tsv", "README.md",
            "croissant.json", "CITATION.cff"} <= on_disk  # fmt: skip
    assert all(sha256(out / name) == digest for name, digest in listed.items())


def test_a_second_release_is_a_new_version_and_the_first_is_unchanged(finished, tmp_path):
    release(finished.slug, "1.0.0", out=tmp_path / "v1")
    first = Release.objects.get(version="1.0.0")
    folder = releasing.bundle_folder(first)
    before = {p: sha256(p) for p in folder.rglob("*") if p.is_file()}
    zip_before = sha256(releasing.zip_path(first))
    with pytest.raises(CommandError, match="exists already"):
        release(finished.slug, "1.0.0", "--title", "Another title")
    release(finished.slug, "1.1.0", "--title", "Second", out=tmp_path / "v2")
    assert sorted(Release.objects.values_list("version", flat=True)) == ["1.0.0", "1.1.0"]
    assert {p: sha256(p) for p in folder.rglob("*") if p.is_file()} == before
    assert sha256(releasing.zip_path(first)) == zip_before == first.zip_sha256
    assert all(sha256(p) == d for p, d in before.items() if p.name != "SHA256SUMS")
    assert "Second" in (tmp_path / "v2" / "README.md").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--version", "1.0", "--license", "CC-BY-4.0"], "not a version"),
        (["--version", "v1.0.0", "--license", "CC-BY-4.0"], "not a version"),
        (["--version", "1.0.0", "--license", "GPL-3.0"], "not a licence offered"),
    ],
)
def test_bad_versions_and_licences_are_refused_and_nothing_is_written(
    finished, releases_dir, args, message
):
    from django.core.management import call_command

    with pytest.raises(CommandError, match=message):
        call_command("release_study", finished.slug, *args, "--authors", "Lovelace, Ada",
                     "--synthetic")  # fmt: skip
    assert not Release.objects.exists()
    assert not any(p.is_file() for p in releases_dir.rglob("*"))


def test_a_study_that_is_not_finished_is_not_released(releases_dir):
    study = make_study()
    with pytest.raises(CommandError, match="not finished"):
        release(study.slug, "1.0.0")
    assert not Release.objects.exists() and not releases_dir.exists()


def test_an_existing_out_folder_is_refused_before_anything_is_released(finished, tmp_path):
    (tmp_path / "taken").mkdir()
    with pytest.raises(CommandError, match="exists already"):
        release(finished.slug, "1.0.0", out=tmp_path / "taken")
    assert not Release.objects.exists()


def test_nothing_of_a_voter_but_the_pseudonym_is_released(finished, tmp_path):
    voter = Voter.objects.filter(study=finished, votes__isnull=False).first()
    Voter.objects.filter(pk=voter.pk).update(
        participant="PROLIFIC5f1e2d3c4b", address="addrhash0123456789",
        platform_data={"STUDY_ID": "secret-study"}, excluded_reason="typed in a rude word",
    )  # fmt: skip
    out = tmp_path / "out"
    release(finished.slug, "1.0.0", out=out)
    everything = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    everything += (tmp_path / "out.zip").read_bytes()
    for secret in (b"PROLIFIC5f1e2d3c4b", b"addrhash0123456789", b"secret-study", b"rude word"):
        assert secret not in everything
    with open(out / "votes.csv", newline="") as fh:
        header = next(csv.reader(fh))
    assert "voter" in header and not {"participant", "address", "platform_data"} & set(header)


def test_every_voters_participant_and_address_hashes_stay_out_and_a_forgotten_voter_is_absent(
    finished, tmp_path
):
    voters = list(Voter.objects.filter(study=finished, votes__isnull=False).distinct())
    for k, voter in enumerate(voters):
        Voter.objects.filter(pk=voter.pk).update(
            participant=participant_key(f"PROLIFIC{k:04d}"), address=address_key(f"10.0.0.{k}")
        )
    hashes = [
        (v.participant, v.address) for v in Voter.objects.filter(pk__in=[v.pk for v in voters])
    ]
    gone = voters[0]
    forget_voter(gone.pk)
    with pytest.raises(CommandError, match="rescore it without them first"):
        release(finished.slug, "1.0.0")
    assert not Release.objects.exists()
    rescore_without_withdrawn(finished.pk)
    out = tmp_path / "out"
    release(finished.slug, "1.0.0", out=out)
    everything = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    everything += (tmp_path / "out.zip").read_bytes()
    for participant, address in hashes:
        assert participant.encode() not in everything and address.encode() not in everything
    with open(out / "votes.csv", newline="") as fh:
        released = list(csv.DictReader(fh))
    pseudonyms = {row["voter"] for row in released}
    assert gone.pseudonym not in pseudonyms  # its votes deleted, its pseudonym replaced
    assert pseudonyms == set(
        Voter.objects.filter(votes__ballot__study=finished).values_list("pseudonym", flat=True)
    )
    assert len(released) == Vote.objects.filter(ballot__study=finished).count()


def test_a_report_with_numpy_numbers_and_missing_parts_still_makes_a_card(
    finished, tmp_path, monkeypatch
):
    report = {**REPORT, "voters": np.int64(8), "alpha": {"alpha": None, "units": 0, "votes": 0},
              "split_half": {"rho": {"mean": np.float64(0.5)}, "items": 45.0,
                             "macro": {"rho": None}},
              "settled_top": [{"k": 5, "expected": None, "settled": False}]}  # fmt: skip
    del report["splits"]
    monkeypatch.setattr(reliability, "latest_report", lambda study: report)
    release(finished.slug, "1.0.0", out=tmp_path / "out")
    card = (tmp_path / "out" / "README.md").read_text()
    assert "Spearman rho: mean 0.500\n" in card and "rho_w (top-weighted): not computed" in card
    assert "each pair both ways round): not computed (0 pairs answered by two or more" in card
    assert "top 5: not computed; 0 items in doubt" in card
    assert Release.objects.get().card["reliability"]["voters"] == 8


def test_the_card_gives_the_stored_reliability_and_settled_top(finished, tmp_path, monkeypatch):
    monkeypatch.setattr(reliability, "latest_report", lambda study: REPORT)
    out = tmp_path / "out"
    release(finished.slug, "1.0.0", out=out)
    card = (out / "README.md").read_text()
    assert card.startswith("---\n") and "\nconfigs:\n" in card
    # The corrected value with the corrected range, never the half crowds' range.
    assert "Spearman rho: mean 0.812, corrected 0.896 (range 0.824 to 0.948)\n" in card
    assert "rho_w (top-weighted): mean 0.845, corrected 0.916 (range 0.846 to 0.964)\n" in card
    assert "0.701" not in card and "0.931" not in card
    assert (
        "Krippendorff's alpha (nominal, each pair both ways round): 0.432 over 17 pairs answered "
        "by two or more voters, over 99% of them answered unanimously (40 votes)"
    ) in card
    assert "top 10: expected 8.6 of 10 right (90%: 7 to 10); 3 items in doubt" in card
    assert "top 5: expected 4.9 of 5 right; settled" in card
    assert Release.objects.get().card["reliability"] == REPORT


def test_without_a_stored_report_the_card_says_reliability_was_not_computed(finished, tmp_path):
    release(finished.slug, "1.0.0", out=tmp_path / "out")
    assert "Reliability was not computed" in (tmp_path / "out" / "README.md").read_text()


def test_a_target_studys_release_has_its_comparisons_as_a_third_configuration(
    monkeypatch, tmp_path
):
    study = finished_target_study(monkeypatch, sizes=(5, 6, 4))
    out = tmp_path / "out"
    release(study.slug, "1.0.0", out=out)
    loaded = load_with_datasets(out, ["ranking", "comparisons"], tmp_path / "hf")
    assert {r["target"] for r in loaded["ranking"]["rows"]} == {"target 00", "target 01",
                                                                 "target 02"}  # fmt: skip
    with open(out / "comparisons.csv", newline="") as fh:
        assert len(loaded["comparisons"]["rows"]) == len(list(csv.DictReader(fh)))
    dataset = mlc.Dataset(jsonld=out / "croissant.json")
    assert len(list(dataset.records(record_set="comparisons"))) == len(
        loaded["comparisons"]["rows"]
    )
    assert "1 voter was excluded" in (out / "README.md").read_text()


def test_the_zip_holds_the_folder_under_its_versioned_name(finished, tmp_path):
    release(finished.slug, "2.0.0-rc.1", out=tmp_path / "out")
    with zipfile.ZipFile(tmp_path / "out.zip") as zf:
        assert {n.split("/", 1)[0] for n in zf.namelist()} == {f"{finished.slug}-2.0.0-rc.1"}
        readme = zf.read(f"{finished.slug}-2.0.0-rc.1/README.md").decode()
    assert readme == (tmp_path / "out" / "README.md").read_text()
    assert io.StringIO(readme).readline() == "---\n"
