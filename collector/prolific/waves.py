"""Recruitment in waves that follow the ballots.

The wave a study's Prolific study should be in is read from the study (:func:`wanted_wave`):

- ``active`` while a ballot is open with a comparison no voter holds: its places raised to what
  the ballot needs (places taken when the ballot's wave began, plus the ballot's comparisons over
  the quota, plus the staff's margin), then published (a draft) or resumed (paused);
- ``paused`` when every comparison of the open ballot is answered or leased, while a ballot
  closes or waits to be opened, and while the study is paused or archived;
- ``stopped`` once the study is finished (then the reconciliation pays what was earned).

The lifecycle asks for the job at each change (:func:`collector.prolific.asking.request`) and
the sweep sends it again when the study's wave changed without one (a lease taken or expired) or
when a job was lost (:func:`resend_due`). The job (:func:`apply`) converges Prolific to that
wave under the link's row lock, so a retried or duplicated job changes nothing: the ballot's
total places are computed once and set, never added. Each transition is audited; a refusal is
stored with Prolific's message (shown on the study page) and never blocks the ballots.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from collector import jobs
from collector.audit.trail import Actor, record
from collector.models import Ballot, Comparison, ProlificLink, Study
from collector.prolific import client as api
from collector.prolific import paying
from collector.prolific.linking import places_for

__all__ = ["JOB_ACTOR", "apply", "resend_due", "wanted_wave"]

log = logging.getLogger(__name__)
JOB_ACTOR = Actor(None, "Prolific job")
Wave = ProlificLink.Wave


def wanted_wave(study: Study) -> tuple[str, Ballot | None]:
    """The wave the study's Prolific study should be in, and the open ballot (if any)."""
    if study.status == Study.Status.FINISHED:
        return Wave.STOPPED, None
    ballot = study.ballots.filter(status=Ballot.Status.OPEN).first()
    if ballot is None or study.paused_at is not None or study.archived_at is not None:
        return Wave.PAUSED, ballot
    free = Comparison.objects.filter(ballot=ballot, status=Comparison.Status.OPEN).filter(
        Q(leased_to__isnull=True) | Q(lease_expires_at__lt=timezone.now())
    )
    return (Wave.ACTIVE if free.exists() else Wave.PAUSED), ballot


def resend_due() -> int:
    """The sweep's rule: send the job again for a link whose study's wave changed since the last
    job (a lease taken or expired), and, through :func:`collector.jobs.resend_stale`, for a link
    whose job is not done ``PROLIFIC_RESEND_SECONDS`` after its last send."""
    if not api.configured():
        return 0
    now = timezone.now()
    for link in ProlificLink.objects.select_related("study").filter(
        study__status=Study.Status.RUNNING
    ):
        if wanted_wave(link.study)[0] != link.wanted:
            ProlificLink.objects.filter(pk=link.pk).update(wanted_at=now)
    not_done = ProlificLink.objects.filter(
        Q(applied_at__isnull=True, wanted_at__isnull=False) | Q(wanted_at__gt=F("applied_at"))
    )
    return jobs.resend_stale(
        not_done,
        jobs.PROLIFIC,
        older_than=timedelta(seconds=settings.PROLIFIC_RESEND_SECONDS),
        now=now,
        what="Prolific job",
    )


def apply(link_id: int) -> str:
    """Bring the Prolific study to the wanted wave (then, once stopped, pay what was earned)."""
    started = timezone.now()
    with transaction.atomic():
        link = ProlificLink.objects.select_for_update().select_related("study").get(pk=link_id)
        wave, ballot = wanted_wave(link.study)
        try:
            with api.ProlificClient() as client:
                done = _converge(client, link, wave, ballot)
        except api.ProlificError as e:
            return _refused(link, e)
    if wave == Wave.STOPPED:
        try:  # outside the lock's transaction: each payment's record commits before its send
            paying.reconcile(link)
        except api.ProlificError as e:
            return _refused(link, e)
    ProlificLink.objects.filter(pk=link.pk).update(wanted=wave, applied_at=started, last_error="")
    return f"{link.study.slug}: {wave} ({', '.join(done) or 'nothing to change'})"


def _refused(link: ProlificLink, e: api.ProlificError) -> str:
    """Store Prolific's message for the study page (the job is sent again by the sweep)."""
    ProlificLink.objects.filter(pk=link.pk).update(last_error=str(e), last_error_at=timezone.now())
    log.warning("Prolific refused the job of study %s: %s", link.study.slug, e)
    return f"refused: {e}"


def _converge(
    client: api.ProlificClient, link: ProlificLink, wave: str, ballot: Ballot | None
) -> list[str]:
    st = client.study(link.prolific_id)
    status, done = st["status"], []
    if wave == Wave.ACTIVE and ballot is not None:
        if link.wave_ballot != ballot.number:
            link.wave_ballot = ballot.number
            link.wave_places = int(st.get("places_taken", 0)) + places_for(
                ballot.n_comparisons, link.study.per_voter_cap, link.margin_percent
            )
            link.save(update_fields=["wave_ballot", "wave_places"])
        if int(st["total_available_places"]) < link.wave_places:
            st = client.set_places(link.prolific_id, link.wave_places)
            done.append(f"places {link.wave_places}")
            _audit(link, "places", places=link.wave_places, ballot=ballot.number)
        action = {"UNPUBLISHED": "PUBLISH", "PAUSED": "START"}.get(status)
    elif wave == Wave.PAUSED:
        action = "PAUSE" if status == "ACTIVE" else None
    else:
        action = "STOP" if status in ("ACTIVE", "PAUSED") else None
    if action:
        st = client.transition(link.prolific_id, action)
        done.append(action)
        _audit(link, action.lower(), ballot=ballot.number if ballot else None)
    link.prolific_status = str(st.get("status", status))
    link.places = int(st.get("total_available_places", 0))
    link.places_taken = int(st.get("places_taken", 0))
    link.save(update_fields=["prolific_status", "places", "places_taken"])
    return done


def _audit(link: ProlificLink, what: str, **detail: object) -> None:
    record(JOB_ACTOR, "prolific.transition", link.study, prolific=what, **detail)
