"""A study's vote set: which votes its figures count, and which figures are stale.

Every change of a study's counted votes (the votes of its closed ballots, without those of
excluded voters) bumps ``Study.vote_set`` by :func:`bump`, in the change's own transaction, and
appends a :class:`collector.models.VoteSetChange` (kind, votes and voters that left the set):

- a voter's exclusion (:func:`collector.voting.store.exclude_voter`, and the attention checks'
  in the voting function);
- a participant's votes deleted at their request (:mod:`collector.participants.forgetting`);
- a rescore without them (:mod:`collector.studies.rescoring`), which changes the ranking.

Every figure derived from the counted votes stores the vote set it was computed from: each
ballot's reliability report with its settled and typed tops (``StudyReliability.vote_set``),
each model's evaluation and paired difference (``Evaluation.vote_set``,
``ModelComparison.vote_set``) and the pooled fit (``Study.pooled_fit_vote_set``); the figures
page, ``dataset.json`` and a release's card print from these. One whose vote set is older than
the study's is *stale*: the pages and the API say so (:func:`stale_text`: "computed before 105
votes were withdrawn; recomputing…"), a release is refused until none is
(:func:`stale_figures`), and :func:`recompute` (sent once the change commits, and again by beat's
sweep, :func:`resend_lost`) asks for each again in the background.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Sum
from django.utils import timezone

from collector import jobs, wording
from collector.models import Evaluation, ModelComparison, Study, StudyReliability, VoteSetChange

__all__ = [
    "Stale",
    "as_json",
    "bump",
    "current",
    "recompute",
    "resend_lost",
    "stale_figures",
    "stale_text",
]

Kind = VoteSetChange.Kind


def bump(study_id: int, kind: str, *, votes: int = 0, voters: int = 0) -> int:
    """Record a change of the study's counted votes (in the caller's transaction) and send the
    recomputing of its figures once it commits. Returns the new vote set."""
    with transaction.atomic():
        Study.objects.filter(pk=study_id).update(vote_set=F("vote_set") + 1)
        number = Study.objects.filter(pk=study_id).values_list("vote_set", flat=True).get()
        VoteSetChange.objects.create(
            study_id=study_id, vote_set=number, kind=kind, votes=votes, voters=voters,
            at=timezone.now(),
        )  # fmt: skip
        jobs.send_after_commit(jobs.RECOMPUTE_STALE, study_id)
    return int(number)


def current(study_id: int) -> int:
    """The study's vote set now (read before the votes a figure is computed from)."""
    return int(Study.objects.filter(pk=study_id).values_list("vote_set", flat=True).get())


def stale_text(study: Study, computed_from: int) -> str | None:
    """What changed since a figure computed from vote set ``computed_from`` ("computed before
    105 votes were withdrawn and the ranking was rescored; recomputing…"); None when current."""
    if computed_from >= study.vote_set:
        return None
    changes = (
        VoteSetChange.objects.filter(study=study, vote_set__gt=computed_from)
        .values("kind")
        .annotate(votes=Sum("votes"), voters=Sum("voters"))
    )
    by_kind = {c["kind"]: c for c in changes}
    parts = []
    if (w := by_kind.get(Kind.WITHDRAWN)) is not None:
        were = "was" if w["votes"] == 1 else "were"
        parts.append(f"{wording.count(w['votes'], 'vote')} {were} withdrawn")
    if (e := by_kind.get(Kind.EXCLUDED)) is not None:
        were = "was" if e["voters"] == 1 else "were"
        parts.append(
            f"{wording.count(e['voters'], 'voter')} ({wording.count(e['votes'], 'vote')})"
            f" {were} excluded"
        )
    if Kind.RESCORED in by_kind:
        parts.append("the ranking was rescored")
    what = " and ".join(parts) or "the counted votes changed"
    return f"computed before {what}; recomputing…"


@dataclass(frozen=True)
class Stale:
    """A stored figure computed from an older vote set than the study's."""

    what: str  # "the reliability after ballot 4", "the evaluation of “glove”", "the pooled fit"
    text: str  # stale_text
    models: tuple[int, ...] = ()  # the evaluations it is of (a model's, a paired difference's)


def _stale_reliability(study: Study) -> QuerySet[StudyReliability]:
    return StudyReliability.objects.filter(study=study, vote_set__lt=study.vote_set).filter(
        Q(result__isnull=False) | ~Q(error="")
    )


def _stale_evaluations(study: Study) -> QuerySet[Evaluation]:
    return Evaluation.objects.filter(study=study, vote_set__lt=study.vote_set).exclude(
        status=Evaluation.Status.REFUSED
    )


def _stale_comparisons(study: Study) -> QuerySet[ModelComparison]:
    return ModelComparison.objects.filter(study=study, vote_set__lt=study.vote_set)


def _fit_stale(study: Study) -> bool:
    return study.pooled_fit_at is not None and study.pooled_fit_vote_set < study.vote_set


def stale_figures(study: Study) -> list[Stale]:
    """Every stored figure of the study that is stale (the release's refusal names them)."""
    found: list[Stale] = []
    if study.vote_set == 0:  # its counted votes never changed: nothing can be stale
        return found
    for vote_set, ballot in _stale_reliability(study).values_list("vote_set", "ballot"):
        found.append(Stale(f"the reliability after ballot {ballot}", _text(study, vote_set)))
    for vote_set, name, pk in _stale_evaluations(study).values_list("vote_set", "name", "pk"):
        found.append(Stale(f"the evaluation of “{name}”", _text(study, vote_set), (pk,)))
    pairs = _stale_comparisons(study).values_list("vote_set", "a__name", "b__name", "a", "b")
    for vote_set, a, b, a_id, b_id in pairs:
        what = f"the paired difference “{a}” - “{b}”"
        found.append(Stale(what, _text(study, vote_set), (a_id, b_id)))
    if _fit_stale(study):
        found.append(Stale("the pooled fit", _text(study, study.pooled_fit_vote_set)))
    return found


def as_json(stale: list[Stale]) -> list[dict[str, str]]:
    """Stale figures for the API and ``dataset.json``: ``[{"figure", "text"}]``."""
    return [{"figure": s.what, "text": s.text} for s in stale]


def _text(study: Study, vote_set: int) -> str:
    return stale_text(study, vote_set) or ""


def recompute(study_id: int) -> str:
    """Ask again for every stale figure of the study (the background job sent by :func:`bump`):
    each reliability report and its typed tops, each finished evaluation and paired difference,
    the pooled fit. Each job stores the vote set it read before the votes; one that finishes
    behind a newer change is stale still, and asked for again by the next run of this job."""
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return f"study {study_id} does not exist"
    now = timezone.now()
    with transaction.atomic():
        Study.objects.filter(pk=study_id).update(recompute_sent_at=now)
        reports = list(_stale_reliability(study).values_list("ballot", flat=True))
        StudyReliability.objects.filter(study=study, ballot__in=reports).update(sent_at=now)
        for ballot in reports:
            jobs.send_after_commit(jobs.STUDY_RELIABILITY, study_id, ballot)
        finished = _stale_evaluations(study).filter(
            status__in=(Evaluation.Status.DONE, Evaluation.Status.FAILED)
        )
        models = list(finished.values_list("pk", flat=True))
        Evaluation.objects.filter(pk__in=models).update(
            status=Evaluation.Status.QUEUED, sent_at=now, heartbeat_at=None, progress=0.0,
            error="",
        )  # fmt: skip
        for pk in models:
            jobs.send_after_commit(jobs.EVALUATE_MODEL, pk)
        done = _stale_comparisons(study).exclude(status=ModelComparison.Status.QUEUED)
        pairs = list(done.values_list("pk", flat=True))
        ModelComparison.objects.filter(pk__in=pairs).update(
            status=ModelComparison.Status.QUEUED, sent_at=now, error=""
        )
        for pk in pairs:
            jobs.send_after_commit(jobs.COMPARE_MODELS, pk)
        refit = study.status == Study.Status.FINISHED and _fit_stale(study)
        if refit:
            jobs.send_after_commit(jobs.REFIT_POOLED, study_id)
    return (
        f"study {study.slug}: {len(reports)} reliability reports, {len(models)} evaluations, "
        f"{len(pairs)} paired differences{' and the pooled fit' if refit else ''} asked for again"
    )


def follow_up(study_id: int, computed_from: int) -> None:
    """After a job stored a figure computed from vote set ``computed_from``: when the study's
    vote set moved on meanwhile, ask for the stale figures again (the change's own recompute may
    have run while this job was computing)."""
    if current(study_id) > computed_from:
        jobs.send(jobs.RECOMPUTE_STALE, study_id)


def resend_lost(now: datetime | None = None) -> dict[str, int]:
    """Beat's sweep: send again the recompute of studies with a stale figure whose recompute was
    last sent over ``RELIABILITY_STUCK_SECONDS`` ago (a lost message, a killed worker), by
    :func:`collector.jobs.resend_stale`."""
    behind = F("study__vote_set")
    stale = Study.objects.filter(
        Exists(StudyReliability.objects.filter(study=OuterRef("pk"), vote_set__lt=behind))
        | Exists(Evaluation.objects.filter(study=OuterRef("pk"), vote_set__lt=behind).exclude(
            status=Evaluation.Status.REFUSED))
        | Exists(ModelComparison.objects.filter(study=OuterRef("pk"), vote_set__lt=behind))
        | Q(pooled_fit_at__isnull=False, pooled_fit_vote_set__lt=F("vote_set"))
    )  # fmt: skip
    sent = jobs.resend_stale(
        stale,
        jobs.RECOMPUTE_STALE,
        older_than=timedelta(seconds=settings.RELIABILITY_STUCK_SECONDS),
        now=now or timezone.now(),
        what="the recompute of study",
        stamp="recompute_sent_at",
    )
    return {"stale_figures_resent": sent}
