"""A study's figures, drawn server-side with matplotlib (SVG in the page, PNG/PDF/SVG files).

- ``votes``: votes over time, one line per ballot;
- ``rescaling-K`` for every closed ballot ``K > 1``: each item's Borda score ``x^(K)`` against
  its running mean ``ybar^(K-1)`` with the fitted line of slope ``b`` (Eq. 6; the paper's Fig. 2);
- ``top-items``: the final top items' scores ballot by ballot (in the spirit of its Fig. 4);
- ``top-ranking`` (finished studies): the top of the final ranking with pooled Bradley-Terry
  log-strengths and their 95% intervals, the study's top (its last ballot's items) marked;
- ``settled-top``: the current top ``k`` (20, or the largest stored ``k`` below it) after the
  latest ballot with each item's probability of being in the true top ``k`` (the stored
  reliability report, :mod:`collector.studies.reliability`), the study's threshold marked;
- ``response-times``: response times of the most active voters (pseudonyms), among those whose
  votes carry a response time.

A target study's top figures (``top-items``, ``top-ranking``, ``settled-top``) are drawn for one
target at a time (``target``: a target's name; the first target by default): targets are never
mixed in one figure.

Every figure has a title (the SVG's ``<title>``) and a text alternative for the page.
"""

from __future__ import annotations

import io
import textwrap
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db.models import Count, Max, Min, Q
from django.db.models.functions import TruncMinute, TruncSecond

import ranking
from collector.models import Area, Ballot, Item, ItemScore, Study, Vote
from collector.studies import pooled_fit, reliability
from collector.studies.designs import ballots_run

FORMATS = {"svg": "image/svg+xml", "png": "image/png", "pdf": "application/pdf"}
TOP_ITEMS = 10  # lines in top-items
TOP_RANKING = pooled_fit.TOP  # rows in top-ranking
VOTERS_SHOWN = 30  # boxes in response-times, the most active voters
RASTER_POINTS = 2000  # scatters with more points are embedded as an image


@dataclass(frozen=True)
class StudyFigure:
    name: str
    title: str
    text: str  # the text alternative
    figure: Any  # matplotlib.figure.Figure

    def render(self, fmt: str = "svg") -> bytes:
        buf = io.BytesIO()
        metadata = {"Title": self.title} if fmt in ("svg", "pdf") else None
        self.figure.savefig(buf, format=fmt, metadata=metadata, dpi=150 if fmt == "png" else None)
        return buf.getvalue()

    def svg(self) -> str:
        """The SVG element alone, for the page."""
        text = self.render("svg").decode()
        return text[text.index("<svg") :]


TITLE_POINTS = 10
# Characters of the title per line: DejaVu Sans averages under 0.6 em a character.
TITLE_EM_PER_CHARACTER = 0.62


def _figure(title: str, size: tuple[float, float] = (6.4, 4.0)) -> tuple[Any, Any]:
    """A figure with ``title`` over its whole width (not over the axes, which long tick labels
    push aside), broken into lines that fit it."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, layout="constrained")
    ax = fig.add_subplot()
    width = int((size[0] * 72 - 12) / (TITLE_POINTS * TITLE_EM_PER_CHARACTER))
    fig.suptitle(textwrap.fill(title, width=width), fontsize=TITLE_POINTS)
    return fig, ax


def _plain_log_axis(axis: Any) -> None:
    """Label a log axis with plain numbers (2.2, 10, 0.5), not powers of ten (2.2x10^0):
    matplotlib picks which ticks to label, as for its own labels."""
    from matplotlib.ticker import LogFormatter

    class Plain(LogFormatter):
        def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
            return f"{x:,.6g}"

    axis.set_major_formatter(Plain(labelOnlyBase=False))
    axis.set_minor_formatter(Plain(labelOnlyBase=False, minor_thresholds=(2, 0.5)))


def votes_over_time(study: Study) -> StudyFigure | None:
    votes = Vote.objects.filter(ballot__study=study)
    span = votes.aggregate(first=Min("created_at"), last=Max("created_at"))
    if span["first"] is None:
        return None
    # Counted per minute, or per second for a study voted in under an hour (a rehearsal).
    short = (span["last"] - span["first"]).total_seconds() < 3600
    rows = list(
        votes.annotate(at=(TruncSecond if short else TruncMinute)("created_at"))
        .values_list("ballot__number", "at")
        .annotate(n=Count("id"))
        .order_by("ballot__number", "at")
    )
    title = f"{study.name}: votes over time"
    fig, ax = _figure(title)
    start = min(r[1] for r in rows)
    for number in sorted({r[0] for r in rows}):
        mine = [r for r in rows if r[0] == number]
        minutes = [(r[1] - start).total_seconds() / 60 for r in mine]
        ax.step(minutes, np.cumsum([r[2] for r in mine]), where="post", label=f"ballot {number}")
    ax.set_xlabel("minutes since the first vote")
    ax.set_ylabel("votes (cumulative)")
    ax.legend(fontsize=8, frameon=False)
    total = sum(r[2] for r in rows)
    elapsed = (span["last"] - span["first"]).total_seconds() / 60
    text = f"Cumulative votes of each ballot over time: {total} votes in {elapsed:.1f} minutes."
    return StudyFigure("votes", title, text, fig)


def rescaling(study: Study) -> list[StudyFigure]:
    """One scatter for every closed ballot after the first (the paper's Fig. 2)."""
    figures = []
    closed = Ballot.objects.filter(study=study, status=Ballot.Status.CLOSED, number__gt=1)
    for ballot in closed.order_by("number"):
        now = dict(ItemScore.objects.filter(ballot=ballot).values_list("item_id", "x"))
        before = dict(
            ItemScore.objects.filter(ballot__study=study, ballot__number=ballot.number - 1)
            .filter(item_id__in=list(now))
            .values_list("item_id", "ybar")
        )
        ids = [i for i in now if now[i] is not None and before.get(i) is not None]
        if not ids:
            continue
        x = np.array([now[i] for i in ids])
        prev = np.array([before[i] for i in ids])
        b, per_target = _slopes(study, ids, x, prev)
        title = f"Ballot {ballot.number}: x^({ballot.number}) against ybar^({ballot.number - 1})"
        fig, ax = _figure(title, (5.0, 4.4))
        # Thousands of points: drawn as one embedded image, or the SVG would weigh megabytes.
        many = len(ids) > RASTER_POINTS
        ax.scatter(x, prev, s=10, alpha=0.6, color="#1f5f99", lw=0, rasterized=many)
        line = np.linspace(min(x.min(), 0.0), 1.0, 50)
        ax.plot(
            line,
            1 - b * (1 - line),
            color="#b42318",
            lw=1.2,
            label=f"1 - ybar = b (1 - x), b = {b:.3f}" + (" (median)" if per_target else ""),
        )
        ax.set_xlabel(f"Borda score x in ballot {ballot.number}")
        ax.set_ylabel(f"running mean ybar after ballot {ballot.number - 1}")
        # Below the axes, never over the points (they may fill any corner).
        fig.legend(fontsize=8, frameon=False, loc="outside lower center")
        text = (
            f"Scatter of the {len(ids)} items of ballot {ballot.number}: their Borda score in "
            f"this ballot against their running mean after the previous one, with the fitted "
            f"rescaling line of slope b = {b:.3f} (Eq. 6)"
            + (f"; each target's own b, as the close fitted it, runs from {per_target[0]:.3f} "
               f"to {per_target[1]:.3f}, the line shows their median." if per_target else ".")
        )  # fmt: skip
        figures.append(StudyFigure(f"rescaling-{ballot.number}", title, text, fig))
    return figures


def _slopes(
    study: Study, ids: list[int], x: np.ndarray, prev: np.ndarray
) -> tuple[float, tuple[float, float] | None]:
    """The slope b of Eq. 6 over these items; a target study's close fits one per target:
    then their median and their range."""
    if not study.targets:
        return ranking.protocol.rescale_slope(x, prev), None
    target = dict(Item.objects.filter(id__in=ids).values_list("id", "area__position"))
    _, groups = np.unique([target[i] for i in ids], return_inverse=True)
    slopes = ranking.protocol.group_slopes(x, prev, groups, int(groups.max()) + 1)
    return float(np.median(slopes)), (float(slopes.min()), float(slopes.max()))


def targets_of(study: Study) -> list[str]:
    """A target study's targets in order (empty for an area study)."""
    if not study.targets:
        return []
    return list(
        Area.objects.filter(study=study).order_by("position").values_list("name", flat=True)
    )


def _final_top(study: Study, count: int, target: str | None = None) -> list[tuple[int, int, str]]:
    """(item id, Item.index, label) of the best ``count`` items (of ``target`` alone), by final
    rank, else by the latest closed ballot's running mean."""
    items = Item.objects.filter(study=study, final_rank__isnull=False).order_by("final_rank")
    latest = ItemScore.objects.filter(ballot__study=study, ybar__isnull=False)
    if target is not None:
        items = items.filter(area__name=target)
        latest = latest.filter(item__area__name=target)
    rows = list(items.values_list("id", "index", "token_a__text", "token_b__text")[:count])
    if not rows:
        rows = list(
            latest.order_by("-ballot__number", "-ybar").values_list(
                "item_id", "item__index", "item__token_a__text", "item__token_b__text"
            )[:count]
        )
    if target is not None:
        return [(r[0], r[1], r[3]) for r in rows]  # the candidate: the target is the figure's
    return [(r[0], r[1], f"{r[2]} – {r[3]}") for r in rows]


def _of_target(title: str, target: str | None) -> str:
    return title if target is None else f"{title}, target {target}"


def top_items(study: Study, target: str | None = None) -> StudyFigure | None:
    top = _final_top(study, TOP_ITEMS, target)
    field = "strength" if study.estimator == Study.Estimator.BRADLEY_TERRY else "ybar"
    scores = ItemScore.objects.filter(
        item_id__in=[t[0] for t in top], **{f"{field}__isnull": False}
    )
    values = list(scores.values_list("item_id", "ballot__number", field))
    if not values:
        return None
    label = "Bradley-Terry strength" if field == "strength" else "running mean ybar"
    if {k for _, k, _ in values} == {1}:  # one ballot: each item's one score, a dot per item
        return _one_ballot_top(study, top, dict((i, v) for i, _, v in values), label, target)
    title = _of_target(f"{study.name}: the top items' scores ballot by ballot", target)
    fig, ax = _figure(title, (6.4, 4.4))
    for item_id, _index, name in top:
        mine = sorted((k, v) for i, k, v in values if i == item_id)
        ax.plot([k for k, _ in mine], [v for _, v in mine], marker="o", ms=3, lw=1, label=name)
    ax.set_xlabel("ballot")
    ax.set_ylabel(label)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=6, frameon=False, ncols=2)
    text = (
        f"The {len(top)} best items' {'strengths' if field == 'strength' else 'running means'} "
        f"after each ballot they were in; lines that settle early mark a stable top."
    )
    return StudyFigure("top-items", title, text, fig)


def _one_ballot_top(
    study: Study,
    top: list[tuple[int, int, str]],
    score: dict[int, float],
    label: str,
    target: str | None,
) -> StudyFigure:
    """The top items of a one-ballot study: a dot per item at its score, best first."""
    shown = [t for t in top if t[0] in score]
    runs = ballots_run(study)
    after = "the study's one ballot" if runs == 1 else f"ballot 1 of {runs}"
    title = _of_target(
        f"{study.name}: the top items' scores ({'one ballot' if runs == 1 else 'after ' + after})",
        target,
    )
    fig, ax = _figure(title, (6.4, 0.9 + 0.3 * len(shown)))
    y = np.arange(1, len(shown) + 1)
    ax.plot([score[t[0]] for t in shown], y, "o", ms=5, color="#1f5f99")
    ax.set_yticks(y, [f"{k}. {t[2]}" for k, t in zip(y, shown, strict=True)], fontsize=8)
    ax.set_ylim(len(shown) + 0.5, 0.5)
    ax.grid(axis="x", lw=0.5, alpha=0.5)
    ax.set_xlabel(label)
    text = f"The {len(shown)} best items' {label} after {after}, best first."
    return StudyFigure("top-items", title, text, fig)


def top_ranking(study: Study, target: str | None = None) -> StudyFigure | None:
    """The final top with the pooled fit stored at the study's end (:mod:`pooled_fit`); a
    target study's top of one target, by ``rank_in_target``."""
    if study.status != Study.Status.FINISHED:
        return None
    items = Item.objects.filter(study=study, final_rank__isnull=False).order_by("final_rank")
    if target is not None:
        items = items.filter(area__name=target).order_by("rank_in_target")
    if not items.filter(pooled_strength__isnull=False).exists():
        return None  # no trusted vote to fit
    fields = ("id", "index", "token_a__text", "token_b__text", "pooled_strength", "pooled_low",
              "pooled_high")  # fmt: skip
    rows = list(items.values_list(*fields)[:TOP_RANKING])
    top = [(r[0], r[1], r[3] if target is not None else f"{r[2]} – {r[3]}") for r in rows]
    s, low, high = (np.array([np.nan if r[k] is None else r[k] for r in rows]) for k in (4, 5, 6))
    title = _of_target(
        f"{study.name}: top {len(top)} of the final ranking, Bradley-Terry 95% intervals", target
    )
    fig, ax = _figure(title, (6.4, 0.6 + 0.22 * len(top)))
    y = np.arange(1, len(top) + 1)
    ax.errorbar(s, y, xerr=[s - low, high - s], fmt="o", ms=3, color="#1f5f99", lw=1, capsize=2)
    last = study.ballots.order_by("-number").first()
    cut = last.n_items if last is not None and target is None else 0
    if target is not None and last is not None:  # the target's candidates in the last ballot
        cut = ItemScore.objects.filter(ballot=last, item__area__name=target).count()
    if 0 < cut < len(top):
        ax.axhline(cut + 0.5, color="#b42318", ls="--", lw=1, label=f"the study's top ({cut})")
        ax.legend(fontsize=8, frameon=False, loc="lower right")
    ax.set_yticks(y, [f"{k}. {t[2]}" for k, t in zip(y, top, strict=True)], fontsize=7)
    ax.set_ylim(len(top) + 0.5, 0.5)
    ax.set_xlabel("pooled Bradley-Terry log-strength")
    text = (
        f"The {len(top)} best items of the final ranking with their pooled Bradley-Terry "
        f"log-strengths and 95% intervals; overlapping intervals are pairs the votes do not "
        f"separate."
    )
    return StudyFigure("top-ranking", title, text, fig)


def response_times(study: Study) -> StudyFigure | None:
    """Box plots of the most active voters' response times (at most ``VOTERS_SHOWN``, most votes
    first), among the voters whose votes carry one: simulated votes, and votes sent to the API
    without ``response_ms``, have none."""
    counted = list(
        Vote.objects.filter(ballot__study=study)
        .values("voter_id", "voter__pseudonym")
        .annotate(n=Count("id"), timed=Count("id", filter=Q(response_ms__isnull=False)))
        .order_by("-n", "voter_id")
    )
    timed = [v for v in counted if v["timed"]]
    if not timed:
        return None
    busiest = timed[:VOTERS_SHOWN]
    times: dict[int, list[float]] = {v["voter_id"]: [] for v in busiest}
    shown = Vote.objects.filter(voter_id__in=list(times), response_ms__isnull=False)
    for voter, ms in shown.values_list("voter_id", "response_ms"):
        times[voter].append(max(ms or 0, 1) / 1000)  # never None here (filtered)
    untimed = len(counted) - len(timed)
    timed_only = " with response times" if untimed else ""
    if len(timed) > len(busiest):
        who = f"the {len(busiest)} most active of {len(timed)} voters{timed_only}"
    elif len(busiest) == 1:
        who = f"the one voter{timed_only}"
    else:
        who = f"all {len(busiest)} voters{timed_only}"
    title = f"{study.name}: response times of {who}"
    fig, ax = _figure(title, (6.4, 5.0))
    ax.boxplot([times[v["voter_id"]] for v in busiest], showfliers=False)
    ax.set_yscale("log")
    _plain_log_axis(ax.yaxis)
    ax.set_xticks(
        range(1, len(busiest) + 1),
        [f"{v['voter__pseudonym']} ({v['n']})" for v in busiest],
        rotation=90,
        fontsize=8,
    )
    ax.set_xlabel("voter (votes), most votes first", fontsize=8)
    ax.set_ylabel("seconds per comparison")
    medians = sorted(float(np.median(times[v["voter_id"]])) for v in busiest)
    counts = ", ".join(str(v["n"]) for v in busiest[:5]) + (", ..." if len(busiest) > 5 else "")
    low, high = f"{medians[0]:.1f} s", f"{medians[-1]:.1f} s"
    if len(medians) == 1:
        spread = f"the median is {low}"
    elif low == high:
        spread = f"every median is {low}"
    else:
        spread = f"their medians run from {low} to {high}"
    text = (
        f"Box plots of the response times of {who} (log scale), most votes first ({counts} "
        f"votes); {spread}."
    )
    if untimed:
        text += (
            f" {untimed} other voter{'s have' if untimed != 1 else ' has'} no response time "
            "(simulated votes, or votes sent to the API without one) and "
            f"{'are' if untimed != 1 else 'is'} not shown."
        )
    return StudyFigure("response-times", title, text, fig)


SETTLED_K = 20  # the top the settled-top figure shows (or the largest stored k below it)


def settled_top(study: Study, target: str | None = None) -> StudyFigure | None:
    """The current top after the latest ballot with each item's probability of being in the
    true top ``k``, from the stored reliability report."""
    report = reliability.latest_report(study)
    if report is None:
        return None
    tops = [
        t for t in report["settled_top"]
        if t.get("target") == target and not t.get("custom") and t["k"] <= SETTLED_K
        and t.get("items")  # a top not computed (too few votes) has nothing to draw
    ]  # fmt: skip
    if not tops:
        return None
    top = max(tops, key=lambda t: t["k"])
    k, items = top["k"], top["items"]
    when = "final" if report["final"] else f"after ballot {report['ballot']}"
    title = _of_target(
        f"{study.name}: is the top {k} settled? Each item's probability, {when}", target
    )
    fig, ax = _figure(title, (6.4, 0.9 + 0.22 * len(items)))
    y = np.arange(1, len(items) + 1)
    p = np.array([entry["probability"] for entry in items])
    threshold = top.get("threshold", report["threshold"])
    colors = ["#1f5f99" if v >= threshold else "#b42318" for v in p]
    ax.barh(y, p, color=colors, height=0.7)
    ax.axvline(threshold, color="#57606a", ls="--", lw=1)
    ax.set_yticks(y, [f"{n}. {entry['item']}" for n, entry in zip(y, items, strict=True)],
                  fontsize=7)  # fmt: skip
    ax.set_ylim(len(items) + 0.5, 0.5)
    ax.set_xlim(0, 1)
    ax.set_xlabel(
        f"probability of being in the true top {k} (dashed: {threshold:.2f}, settled; red: below)"
    )
    verdict = (
        f"every item is at {threshold:.2f} or more: the top {k} is settled"
        if top["settled"]
        else f"{top['in_doubt']} of the {k} items are below {threshold:.2f} (in doubt, red)"
    )
    text = (
        f"The top {k} {'of the final ranking' if report['final'] else when}"
        f"{'' if target is None else f' of target {target}'}, best "
        f"first, each with its probability of being in the true top {k} (the share of "
        f"{report['resamples']} posterior draws with it among their {k} strongest); expected "
        f"{top['expected']:.1f} of {k} right; {verdict}."
    )
    return StudyFigure("settled-top", title, text, fig)


def study_figures(study: Study, target: str | None = None) -> list[StudyFigure]:
    """Every figure the study has data for, in the order above; a target study's top figures of
    ``target`` (default: its first target)."""
    if study.targets:
        names = targets_of(study)
        target = target if target in names else (names[0] if names else None)
    else:
        target = None
    found = [votes_over_time(study), *rescaling(study), top_items(study, target)]
    found += [top_ranking(study, target), settled_top(study, target), response_times(study)]
    return [f for f in found if f is not None]
