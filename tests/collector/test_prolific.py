"""Prolific through its API, against the test Prolific (collector.prolific.fake): the study is
created from the product's study, recruitment follows the ballots in waves, and the
reconciliation approves and pays exactly what was earned, once."""

from __future__ import annotations

import math
import threading
from collections import Counter
from decimal import Decimal
from urllib.parse import urlsplit

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.test import Client

from collector import jobs
from collector.models import AuditEntry, Ballot, ProlificLink, ProlificPayment, Study, Voter
from collector.participants.forgetting import forget_voter
from collector.prolific import asking, linking, paying, waves
from collector.prolific.client import ProlificClient, ProlificError
from collector.prolific.fake import FakeProlific
from collector.studies import lifecycle, members
from collector.voting import store
from collector.voting.participant_ids import participant_key
from tests import factories
from tests.factories import staff_user
from tests.job_routes import on_send

pytestmark = pytest.mark.django_db(transaction=True)

TOKEN = "test-prolific-token"


@pytest.fixture
def fake(settings):
    with FakeProlific(TOKEN, page_size=3) as server:
        settings.PROLIFIC_API_TOKEN = TOKEN
        settings.PROLIFIC_API_URL = server.url
        yield server


class Jobs:
    """The Prolific jobs sent, run at once unless ``lose`` says the next ones are lost."""

    def __init__(self) -> None:
        self.sent: list[int] = []
        self.lose = 0

    def __call__(self, link_id: int) -> None:
        self.sent.append(link_id)
        if self.lose:
            self.lose -= 1
            return
        waves.apply(link_id)


@pytest.fixture
def sent(monkeypatch) -> Jobs:
    runner = Jobs()
    on_send(monkeypatch, jobs.PROLIFIC, runner)
    on_send(monkeypatch, jobs.FINISH_CLOSE_JOB, lambda ballot_id: None)
    return runner


def _terms(**changes) -> linking.Terms:
    return linking.Terms(**{"hourly_rate": 900, "margin_percent": 20, "partial_amount": 75,
                            "planned_seconds": 9, **changes})  # fmt: skip


def _visit(url: str) -> Client:
    """A participant follows the study URL Prolific sent them to and consents."""
    browser = Client()
    parts = urlsplit(url)
    browser.post(f"{parts.path}?{parts.query}")
    return browser


def _voter(study: Study, pid: str) -> Voter:
    return Voter.objects.get(study=study, participant=participant_key(pid))


def _answer(voter: Voter, n: int, rng: np.random.Generator) -> int:
    done = 0
    while done < n and (pair := store.next_comparison(voter)) is not None:
        store.record_vote(voter, pair.id, str(rng.choice(["left", "right"])))
        done += 1
    return done


def test_without_a_token_the_prolific_box_says_how_to_enable_it(client, settings):
    settings.PROLIFIC_API_TOKEN = ""
    study = factories.make_study(n_items=10, n_ballots=1, created_by=staff_user(client))
    page = client.get(f"/staff/{study.slug}/").content.decode()
    assert "set <code>PROLIFIC_API_TOKEN</code>" in page
    reply = client.post(f"/staff/{study.slug}/prolific/", {"hourly_rate": "9"}, follow=True)
    assert reply.status_code == 200
    assert "Set PROLIFIC_API_TOKEN" in reply.content.decode()
    assert not ProlificLink.objects.exists()
    with pytest.raises(CommandError, match="PROLIFIC_API_TOKEN is not set"):
        call_command("prolific_sync", study.slug)


def test_the_study_is_created_with_its_url_codes_actions_time_reward_and_places(client, fake, sent):
    study = factories.make_study(n_items=10, n_ballots=3, cap=7, open_first=False,
                                 created_by=staff_user(client))  # fmt: skip
    form = {"hourly_rate": "12.50", "margin_percent": "20", "partial_amount": "0.75",
            "partial_action": "MANUALLY_REVIEW", "excluded_action": "REQUEST_RETURN",
            "planned_seconds": "11"}  # fmt: skip
    reply = client.post(f"/staff/{study.slug}/prolific/", form, follow=True)
    assert reply.status_code == 200
    link = ProlificLink.objects.get(study=study)
    made = fake.study(link.prolific_id)
    body = made.body
    assert body["name"] == study.name
    assert body["external_study_url"] == (
        f"http://testserver/s/{study.slug}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    actions = {c["code"]: (c["code_type"], c["actions"][0]["action"])
               for c in body["completion_codes"]}  # fmt: skip
    assert actions == {
        study.completion_code: ("COMPLETED", "AUTOMATICALLY_APPROVE"),
        study.no_consent_code: ("NO_CONSENT", "REQUEST_RETURN"),
        study.partial_code: ("OTHER", "MANUALLY_REVIEW"),
        study.excluded_code: ("FAILED_ATTENTION_CHECK", "REQUEST_RETURN"),
    }
    # 7 answers of 11 s: 77 s, 2 minutes; 12.50 an hour for 2 minutes: 41.67, rounded up.
    assert body["estimated_completion_time"] == 2
    assert body["reward"] == 42
    first = study.ballots.get(number=1).n_comparisons
    assert made.places == math.ceil(first / 7) + math.ceil(first / 7) * 20 // 100
    assert made.status == "UNPUBLISHED" and made.transitions == []  # no ballot open yet
    assert link.partial_amount == 75 and link.created_here
    assert AuditEntry.objects.filter(action="prolific.create", study_id=study.pk).count() == 1


def test_linking_an_existing_prolific_study_by_id_and_a_refusal_is_a_message(client, fake):
    study = factories.make_study(n_items=10, n_ballots=1, open_first=False,
                                 created_by=staff_user(client))  # fmt: skip
    with ProlificClient() as api:
        made = api.create_study(linking.study_body(study, _terms(), "https://x.example"))
    form = {"hourly_rate": "9", "margin_percent": "10", "partial_amount": "0",
            "partial_action": "REQUEST_RETURN", "excluded_action": "MANUALLY_REVIEW",
            "planned_seconds": "8"}  # fmt: skip
    page = client.post(f"/staff/{study.slug}/prolific/", {**form, "prolific_id": "nosuch1"},
                       follow=True).content.decode()  # fmt: skip
    assert "Prolific refused: HTTP 404" in page and not ProlificLink.objects.exists()
    bad = client.post(f"/staff/{study.slug}/prolific/", {**form, "prolific_id": "a b/c"})
    assert bad.status_code == 302 and not ProlificLink.objects.exists()
    client.post(f"/staff/{study.slug}/prolific/", {**form, "prolific_id": made["id"]})
    link = ProlificLink.objects.get(study=study)
    assert link.prolific_id == made["id"] and not link.created_here
    assert len(fake.studies) == 1
    assert AuditEntry.objects.filter(action="prolific.link", study_id=study.pk).count() == 1


def test_the_test_prolific_refuses_what_prolific_refuses(client, fake, sent):
    study = factories.make_study(n_items=10, n_ballots=2, m=4, created_by=staff_user(client))
    link = linking.create(study, _terms(), "http://testserver")
    api = ProlificClient()
    with pytest.raises(ProlificError, match="Cannot PAUSE a study that is UNPUBLISHED"):
        api.transition(link.prolific_id, "PAUSE")
    with pytest.raises(ProlificError, match="not a valid choice"):
        api.transition(link.prolific_id, "FINISH")
    api.set_places(link.prolific_id, 3)  # a draft's places may go down
    api.transition(link.prolific_id, "PUBLISH")
    api.set_places(link.prolific_id, 5)
    with pytest.raises(ProlificError, match="can only be increased"):
        api.set_places(link.prolific_id, 4)
    fake.arrive(link.prolific_id, "PID-A")
    fake.arrive(link.prolific_id, "PID-B")
    with pytest.raises(ProlificError, match="Cannot be fewer than the 2 places already taken"):
        api.set_places(link.prolific_id, 1)
    with pytest.raises(ProlificError, match="HTTP 401"):
        ProlificClient(token="wrong").study(link.prolific_id)
    assert api.study(link.prolific_id)["total_available_places"] == 5


def test_the_prolific_study_is_created_once_however_often_it_is_asked(client, fake, sent):
    study = factories.make_study(n_items=10, n_ballots=2, m=4, created_by=staff_user(client))
    link = linking.create(study, _terms(), "http://testserver")
    with pytest.raises(linking.AlreadyLinked, match=link.prolific_id):
        linking.create(study, _terms(), "http://testserver")
    assert list(fake.studies) == [link.prolific_id]


def test_a_viewer_cannot_create_the_prolific_study(client, fake):
    owner = staff_user()
    study = factories.make_study(n_items=10, n_ballots=1, created_by=owner)
    viewer = staff_user(client, "viewer")
    members.add_member(study, viewer.username, "viewer")
    reply = client.post(f"/staff/{study.slug}/prolific/", {"hourly_rate": "9"})
    assert reply.status_code == 403
    assert not fake.studies


def test_a_whole_study_over_three_ballots_recruits_in_waves_and_pays_exactly_what_was_earned(
    fake, sent, settings
):
    rng = np.random.default_rng(34)
    study = factories.make_study(n_items=12, n_ballots=3, cap=8, open_first=False, seed=5)
    link = linking.create(study, _terms(), "http://testserver")
    prolific = fake.study(link.prolific_id)
    quota = 8
    pids: dict[str, object] = {}

    def wave(ballot: Ballot) -> list[str]:
        """Participants arrive while Prolific lets them; each answers their quota, but the
        first of each wave stops after 2 (a partial), and one arrives and never comes."""
        arrived = []
        while prolific.status == "ACTIVE" and prolific.taken < prolific.places:
            sub, url = fake.arrive(link.prolific_id)
            pids[sub.participant_id] = sub
            arrived.append(sub.participant_id)
            if len(arrived) == 2:
                continue  # never follows the link: a submission with no voter
            _visit(url)
            voter = _voter(study, sub.participant_id)
            _answer(voter, 2 if len(arrived) == 1 else quota, rng)
            ballot.refresh_from_db()
            if ballot.status != Ballot.Status.OPEN:
                break
        return arrived

    places_asked = []
    for number in (1, 2, 3):
        ballot = study.ballots.get(number=number)
        taken_before = prolific.taken
        lifecycle.open_ballot(ballot.pk)
        base = math.ceil(ballot.n_comparisons / quota)
        needed = base + base * 20 // 100  # the margin, rounded down
        assert prolific.status == "ACTIVE"
        assert prolific.places == taken_before + needed
        places_asked.append(prolific.places)
        wave(ballot)
        ballot.refresh_from_db()
        # Either every comparison answered (closing) or the places ran out: others finish it.
        while ballot.status == Ballot.Status.OPEN:
            assert _answer(Voter.objects.create(study=study), quota, rng)
            ballot.refresh_from_db()
        assert ballot.status == Ballot.Status.CLOSING
        assert prolific.status == "PAUSED"  # paused the moment the ballot's last pair went
        lifecycle.finish_close(ballot.pk)
    study.refresh_from_db()
    assert study.status == Study.Status.FINISHED
    assert prolific.transitions == ["PUBLISH", "PAUSE", "START", "PAUSE", "START", "PAUSE", "STOP"]
    assert prolific.place_changes == places_asked[1:]  # ballot 1's places came with the draft
    # Participants come back with their codes: the completes approve themselves; one typed no
    # code at all (awaiting review, approved by the reconciliation); partials get the bonus.
    complete, partial, typed_nothing = [], [], []
    for pid, sub in pids.items():
        voter = Voter.objects.filter(study=study, participant=participant_key(pid)).first()
        if voter is None:
            continue
        outcome = store.standing(voter).outcome
        if outcome == "complete" and not typed_nothing:
            fake.finish(sub, "")
            typed_nothing.append(sub.id)
        elif outcome == "complete":
            fake.finish(sub, study.completion_code)
            complete.append(sub.id)
        else:
            assert outcome == "partial"
            fake.finish(sub, study.partial_code)
            partial.append(sub.id)
    assert len(partial) == 3 and len(typed_nothing) == 1
    # A voter with a code and no submission (came without Prolific's link, or theirs was lost).
    _visit(f"/s/{study.slug}/?PROLIFIC_PID=stray-pid&STUDY_ID=x&SESSION_ID=y")
    # The finish ran the reconciliation by itself: the partials were paid then (their outcome
    # was known); the one who typed no code is approved by the next run.
    assert sorted(fake.bonuses_paid) == sorted((sid, Decimal("0.75")) for sid in partial)
    report = paying.reconcile(ProlificLink.objects.get(pk=link.pk))
    assert report.approved == 1 and report.bonused == 0
    assert Counter(fake.approvals) == Counter({sid: 1 for sid in typed_nothing})
    assert sorted(fake.bonuses_paid) == sorted((sid, Decimal("0.75")) for sid in partial)
    kinds = Counter(m["kind"] for m in report.mismatches)
    never_came = [pid for pid in pids if not Voter.objects.filter(
        study=study, participant=participant_key(pid)).exists()]  # fmt: skip
    assert never_came and kinds == {"no_voter": len(never_came)}  # the stray answered nothing
    # Once more (the button, the command): nothing approved or paid twice.
    call_command("prolific_sync", study.slug)
    assert len(fake.approvals) == 1 and len(fake.bonuses_paid) == 3
    synced = AuditEntry.objects.get(action="prolific.sync")  # the command's run, not the job's
    assert synced.detail == {"approved": 0, "bonuses": 0, "mismatches": len(report.mismatches)}
    assert ProlificPayment.objects.filter(state="done").count() == 4
    assert AuditEntry.objects.filter(action="prolific.transition").count() >= 7


def test_a_participant_whose_data_was_deleted_is_approved_for_what_they_earned(fake, sent):
    rng = np.random.default_rng(35)
    study = factories.make_study(n_items=10, n_ballots=2, cap=4, open_first=False, seed=5)
    link = linking.create(study, _terms(), "http://testserver")
    lifecycle.open_ballot(study.ballots.get(number=1).pk)
    sub, url = fake.arrive(link.prolific_id, "PID-GONE")
    _visit(url)
    voter = _voter(study, "PID-GONE")
    assert _answer(voter, 4, rng) == 4 and store.standing(voter).outcome == "complete"
    fake.finish(sub, "")  # came back without the code: awaiting review
    assert forget_voter(voter.pk) is not None  # deleted at their request before the sync
    report = paying.reconcile(ProlificLink.objects.get(pk=link.pk))
    assert report.approved == 1 and report.mismatches == []
    assert fake.approvals == [sub.id]


def test_a_lost_job_is_sent_again_and_a_retried_job_never_adds_places_twice(fake, sent, settings):
    settings.PROLIFIC_RESEND_SECONDS = 0
    settings.CELERY_TASK_ALWAYS_EAGER = False
    study = factories.make_study(n_items=10, n_ballots=2, cap=5, open_first=False)
    link = linking.create(study, _terms(), "http://testserver")
    prolific = fake.study(link.prolific_id)
    sent.lose = 1
    lifecycle.open_ballot(study.ballots.get(number=1).pk)
    assert prolific.status == "UNPUBLISHED"  # the job was lost
    assert waves.resend_due() == 1
    assert prolific.status == "ACTIVE"
    places = prolific.places
    fake.arrive(link.prolific_id)
    waves.apply(link.pk)
    waves.apply(link.pk)
    assert prolific.places == places and prolific.place_changes == []
    assert prolific.transitions == ["PUBLISH"]
    assert waves.resend_due() == 0  # done: nothing to send


def test_a_change_of_the_ballots_never_waits_for_a_job_talking_to_prolific(fake, sent):
    study = factories.make_study(n_items=10, n_ballots=2, cap=5, open_first=False)
    link = linking.create(study, _terms(), "http://testserver")
    sent.lose = 1  # the job is only recorded as sent
    holding, release = threading.Event(), threading.Event()

    def job_in_progress() -> None:  # as waves.apply holds the row while Prolific answers
        with transaction.atomic():
            ProlificLink.objects.select_for_update().get(pk=link.pk)
            holding.set()
            release.wait(30)
        connection.close()

    worker = threading.Thread(target=job_in_progress)
    worker.start()
    assert holding.wait(30)
    asked = threading.Thread(target=lambda: (asking.request(study.pk), connection.close()))
    asked.start()
    asked.join(20)  # a deadline, not a speed: a request that waits for the lock is still alive
    blocked = asked.is_alive()
    release.set()
    worker.join(30)
    asked.join(30)
    assert not blocked and sent.sent == [link.pk]
    assert ProlificLink.objects.get(pk=link.pk).sent_at is None  # the locked row kept its stamps


def test_a_refused_transition_is_shown_on_the_study_page_and_never_blocks_a_close(
    client, fake, sent
):
    study = factories.make_study(n_items=10, n_ballots=2, cap=50, open_first=False,
                                 created_by=staff_user(client))  # fmt: skip
    link = linking.create(study, _terms(), "http://testserver")
    fake.fail_next["POST /api/v1/studies/"] = [400]
    ballot = study.ballots.get(number=1)
    lifecycle.open_ballot(ballot.pk)
    link.refresh_from_db()
    assert "HTTP 400: Refused by the test" in link.last_error
    page = client.get(f"/staff/{study.slug}/").content.decode()
    assert "Prolific refused the last change" in page and "Refused by the test" in page
    assert TOKEN not in page
    lifecycle.close_early(ballot.pk)  # the close goes on
    assert Ballot.objects.get(pk=ballot.pk).status == Ballot.Status.CLOSING


def test_a_bonus_payment_with_no_answer_is_never_sent_again_and_a_refused_one_is(fake, sent):
    study = factories.make_study(n_items=10, n_ballots=1, cap=50)
    link = linking.create(study, _terms(), "http://testserver")
    waves.apply(link.pk)
    subs = []
    for _ in range(2):
        sub, url = fake.arrive(link.prolific_id)
        _visit(url)
        voter = _voter(study, sub.participant_id)
        _answer(voter, 1, np.random.default_rng(1))
        Voter.objects.filter(pk=voter.pk).update(partial_at=voter.created_at)
        fake.finish(sub, study.partial_code)
        subs.append(sub)
    fake.fail_next["POST /api/v1/bulk-bonus-payments/"] = [400]
    with pytest.raises(ProlificError, match="HTTP 400"):
        paying.reconcile(link)
    assert set(ProlificPayment.objects.values_list("state", flat=True)) == {"set_up"}
    paying.reconcile(link)  # resumes: the same bulk payment, paid once
    assert len(fake.bonuses_paid) == 2 and len(fake.bulk_bonuses) == 1
    # A third partial, whose pay call gets no usable answer: never sent again, listed.
    sub, url = fake.arrive(link.prolific_id)
    _visit(url)
    voter = _voter(study, sub.participant_id)
    Voter.objects.filter(pk=voter.pk).update(partial_at=voter.created_at)
    fake.fail_next["POST /api/v1/bulk-bonus-payments/"] = [503]
    with pytest.raises(ProlificError, match="HTTP 503"):
        paying.reconcile(link)
    report = paying.reconcile(link)
    assert len(fake.bonuses_paid) == 2
    assert [m["kind"] for m in report.mismatches] == ["bonus_unanswered"]


def test_the_dry_run_sends_nothing_and_every_page_of_submissions_is_read(fake, sent, capsys):
    study = factories.make_study(n_items=10, n_ballots=1, cap=3)
    link = linking.create(study, _terms(margin_percent=200), "http://testserver")
    waves.apply(link.pk)
    for _ in range(7):  # three pages of three
        fake.arrive(link.prolific_id)
    call_command("prolific_sync", study.slug, "--dry-run")
    out = capsys.readouterr().out
    assert out.startswith("7 submissions; would approve 0;")
    assert out.count("no_voter") == 7
    assert not ProlificPayment.objects.exists() and not fake.approvals
    assert not AuditEntry.objects.filter(action="prolific.sync").exists()  # a dry run
    with pytest.raises(CommandError, match="no Prolific study is linked"):
        call_command("prolific_sync", factories.make_study(n_items=10, n_ballots=1).slug)


def test_the_voters_page_lists_what_does_not_match(client, fake, sent):
    study = factories.make_study(n_items=10, n_ballots=1, cap=50, created_by=staff_user(client))
    link = linking.create(study, _terms(), "http://testserver")
    waves.apply(link.pk)
    sub, _ = fake.arrive(link.prolific_id)
    client.post(f"/staff/{study.slug}/prolific/sync/")
    page = client.get(f"/staff/{study.slug}/voters/").content.decode()
    assert "Prolific: what does not match" in page
    assert "a submission with no voter of this study" in page and sub.id in page
    assert sub.participant_id not in page
    assert AuditEntry.objects.filter(action="prolific.sync", study_id=study.pk).count() == 1


def test_the_rehearsal_prints_the_waiting_and_places_figures_with_and_without_waves(capsys):
    call_command("rehearse", "--prolific", "--tokens", "7", "--per-voter-cap", "6", "--m", "4",
                 "--ballots", "2", "--gap-minutes", "2", "--arrivals", "6")  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0].strip() for line in lines] == ["waves", "open"]
    waves_line = lines[0]
    assert ", 0 paid for waiting;" in waves_line
    assert "places bought for" in waves_line and "per comparison" in waves_line
    assert not Study.objects.exists()  # the rehearsal's study is deleted at its end
