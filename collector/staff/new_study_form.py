"""The new-study form: it parses the token or item list, or the target list of a target study, and
checks the parameters, and reports every problem in one round trip: a bad list does not hide a
bad parameter. A valid form carries ``areas`` (parsed input), ``targets`` (a target study?) and
``preview`` (the plan with its warnings), so the view can show the plan before anything is
created. Its texts and codes are :class:`StudyTextsFields`, shared with the edit form.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from django import forms
from django.conf import settings
from django.http import QueryDict

from collector.models import Study
from collector.staff.managing_forms import TEXT_FIELDSETS, StudyTextsFields
from collector.studies import creating, importing, lifecycle, questions
from collector.studies.designs import design_choices, design_help
from ranking.designs import default_design, given_options, registered_options

MAX_PER_VOTER_CAP = 1_000_000
MAX_LEASE_SECONDS = 24 * 3600

N_B_HELP = (
    "How many rounds of voting. After each ballot only the best items go on to the next, so "
    "the votes gather on the top of the ranking. The paper's guidance: at least 2 and at most "
    "about 10, since each ballot is a pause while the next is made. The one-ballot designs "
    "(uniform, round robin) spend the budget these ballots would."
)
ALPHA_HELP = (
    "The share of items kept after each ballot. Smaller focuses the votes on the top sooner, "
    "at a higher risk of dropping a good item early. The paper's guidance: alpha below about "
    "0.1^(1/(n_b-1)), so that at most a tenth of the items reach the last ballot (n_b = 7: "
    "alpha up to about 0.68), and above about (2/N_items)^(1/(n_b-1)), so that the last ballot "
    "still holds a few items."
)
M_HELP = (
    "How many comparisons each item takes part in, in each ballot. Items that reach the last "
    "ballot have been compared M_top = n_b * M times: the paper's guidance is M_top of about "
    "100 or more for a precise top (n_b = 7: M of 15 or more). The number of comparisons, and "
    "so the cost, grows in proportion to M; the plan shows both."
)
CAP_HELP = (
    "The most comparisons one voter may answer in one ballot. Lower spreads each ballot over "
    "more people, so no one voter's taste weighs much on an item; higher needs fewer voters. A "
    "ballot needs at least its comparisons divided by the cap voters (the plan lists each "
    "ballot's comparisons); a platform's submission should ask for about the cap."
)


class StudyForm(StudyTextsFields):
    tokens_text = forms.CharField(
        label="Tokens (area,token per line)",
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
        required=False,
        help_text="Every pair of tokens inside an area becomes an item.",
    )
    tokens_file = forms.FileField(label="…or upload tokens (CSV/TSV)", required=False)
    items_text = forms.CharField(
        label="Items (area,token_a,token_b per line)",
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        required=False,
        help_text="Optional: exactly these pairs become the items.",
    )
    items_file = forms.FileField(label="…or upload items (CSV/TSV)", required=False)
    targets_text = forms.CharField(
        label="Targets (target,candidate[,kind] per line)",
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
        required=False,
        help_text="Instead of tokens or items: a target study. Each (target, candidate) is an "
        "item; every comparison pairs two candidates of one target (“Which is more related to "
        "cat: pet or invoice?”) and each target's candidates are ranked on their own. kind, "
        "optional: positive, distractor or random. A target needs at least two candidates.",
    )
    targets_file = forms.FileField(label="…or upload targets (CSV/TSV)", required=False)
    max_items_per_area = forms.IntegerField(
        label="At most K items per area",
        min_value=1,
        required=False,
        help_text="Optional seeded random sample of each area's items (a target study: of each "
        "target's candidates).",
    )
    n_ballots = forms.IntegerField(label="Ballots (n_b)", initial=7, help_text=N_B_HELP)
    alpha = forms.FloatField(label="Kept fraction (alpha)", initial=0.5, help_text=ALPHA_HELP)
    m = forms.IntegerField(label="Comparisons per item (M)", initial=20, help_text=M_HELP)
    design = forms.ChoiceField(choices=design_choices, initial=default_design)
    estimator = forms.ChoiceField(
        choices=Study.Estimator.choices, initial=Study.Estimator.RESCALED_BORDA
    )
    seed = forms.IntegerField(
        initial=0,
        min_value=0,
        max_value=2**62,
        help_text="The same seed and list give the same ballots: a study can be rerun exactly.",
    )
    allow_ties = forms.BooleanField(label="Allow “can't decide”", initial=True, required=False)
    per_voter_cap = forms.IntegerField(
        label="Per-voter cap per ballot",
        initial=100,
        min_value=1,
        max_value=MAX_PER_VOTER_CAP,
        help_text=CAP_HELP,
    )
    lease_seconds = forms.IntegerField(
        label="Lease (seconds)",
        initial=300,
        min_value=10,
        max_value=MAX_LEASE_SECONDS,
        help_text="How long a comparison handed to a voter stays theirs before it goes back to "
        "the pool.",
    )
    auto_open = forms.BooleanField(
        label="Open each next ballot at once", initial=False, required=False
    )
    crowd_of = forms.ChoiceField(
        label="Plan with the crowd of",
        required=False,
        choices=[("", "none")],
        help_text="Preview the plan with the noise measured in one of your studies: the preview "
        "then predicts rho_w and the other metrics this plan reaches with that crowd "
        "(simulated, a few seconds).",
    )

    # The study this one duplicates (the form was filled from it): its attention checks come too.
    duplicate_of = forms.CharField(required=False, widget=forms.HiddenInput)

    target_rho_w = forms.FloatField(
        label="rho_w to reach",
        required=False,
        min_value=-1.0,
        max_value=1.0,
        help_text="With a crowd: the preview finds the fewest comparisons per item with which "
        "each design reaches this rho_w (blank: what the paper's adaptive design reaches with "
        "these parameters).",
    )

    def __init__(self, *args: Any, crowds: Sequence[tuple[str, str]] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["crowd_of"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [("", "none"), *crowds]
        # Each registered design's own summary (the RANKING_DESIGNS setting lists them).
        self.fields["design"].help_text = design_help()
        # Every registered design's options (Swiss's window and cap...), after the design.
        options = registered_options()
        for name, (parameter, designs) in options.items():
            self.fields.setdefault(
                name,
                forms.IntegerField(
                    label=f"{name.capitalize()} ({', '.join(designs)})",
                    required=False,
                    min_value=parameter.minimum,
                    help_text=f"{parameter.help} Default {parameter.default}.",
                ),
            )
        self.design_option_names = tuple(options)
        self.fieldsets = tuple(
            (legend, help_text, _after(names, "design", self.design_option_names))
            for legend, help_text, names in type(self).fieldsets
        )

    fieldsets = (
        TEXT_FIELDSETS[0],
        (
            "Tokens, items or targets",
            "Paste or upload a list (CSV or TSV, an optional header row), not both: tokens "
            "and/or items for a study of pairs, or targets for a target study.",
            ("tokens_text", "tokens_file", "items_text", "items_file", "targets_text",
             "targets_file", "max_items_per_area"),
        ),
        (
            "Parameters",
            "These shape the ballots and cannot be changed once the study is created; "
            "Preview the plan to see what they give.",
            ("n_ballots", "alpha", "m", "design", "estimator", "seed", "crowd_of", "target_rho_w"),
        ),
        (
            "Voting rules",
            "Fixed once the study is created.",
            ("per_voter_cap", "lease_seconds", "allow_ties", "auto_open"),
        ),
        TEXT_FIELDSETS[1],
        (TEXT_FIELDSETS[2][0], TEXT_FIELDSETS[2][1] + " Blank codes are drawn at random.",
         TEXT_FIELDSETS[2][2]),
        *TEXT_FIELDSETS[3:],
    )  # fmt: skip

    areas: list[importing.AreaSpec]
    preview: dict[str, Any]
    targets: bool = False  # a target list was given (alone): a target study
    _kind_known: bool = True  # not both a target list and a token or item list

    def _source(self, field: str) -> bytes | None:
        upload = self.cleaned_data.get(f"{field}_file")
        if upload and (self.cleaned_data.get(f"{field}_text") or "").strip():
            raise importing.ImportFailed(
                [f"{field}: give the list as text or as a file, not both (which one did you mean?)"]
            )
        if upload:
            if upload.size > settings.MAX_UPLOAD_BYTES:
                raise importing.ImportFailed(
                    [
                        f"{field}: the file is {upload.size:,} bytes, over the limit of "
                        f"{settings.MAX_UPLOAD_BYTES:,} bytes"
                    ]
                )
            return upload.read()
        text = self.cleaned_data.get(f"{field}_text") or ""
        return text.encode("utf-8") if text.strip() else None

    def _list(self, field: str, parse) -> list[importing.AreaSpec] | None:
        """Parse one list (tokens or items); its problems go to its text box, or its file field
        when it came as a file. Returns None when it is absent or wrong."""
        if self.has_error(f"{field}_text") or self.has_error(f"{field}_file"):
            self._lists_failed = True
            return None
        target = f"{field}_file" if self.cleaned_data.get(f"{field}_file") else f"{field}_text"
        try:
            data = self._source(field)
            if data is None:
                return None
            areas = parse(data)
        except importing.ImportFailed as exc:
            self.add_error(target, exc.errors)
            self._lists_failed = True
            return None
        self.kept_lists[f"{field}_text"] = data.decode("utf-8-sig")
        return areas

    def _given(self, field: str) -> bool:
        """Whether the list ``field`` (tokens, items, targets) came, as text or as a file (read
        before the lists are parsed: a list's error takes it out of ``cleaned_data``)."""
        d = self.cleaned_data
        return bool(d.get(f"{field}_file")) or bool((d.get(f"{field}_text") or "").strip())

    def _areas(self) -> list[importing.AreaSpec] | None:
        limit = settings.MAX_UPLOAD_BYTES
        self.kept_lists: dict[str, str] = {}
        self._lists_failed = False
        pairs = self._given("tokens") or self._given("items")
        given_targets = self._given("targets")
        self.targets = given_targets and not pairs
        self._kind_known = not (given_targets and pairs)
        where = "targets_file" if self.cleaned_data.get("targets_file") else "targets_text"
        tokens = self._list("tokens", lambda d: importing.parse_tokens(d, max_bytes=limit))
        items = self._list(
            "items", lambda d: importing.parse_items(d, max_bytes=limit, tokens=tokens)
        )
        targets = self._list("targets", lambda d: importing.parse_targets(d, max_bytes=limit))
        if given_targets and pairs:
            self.add_error(
                where,
                "A target list makes a target study on its own: give it without a token or "
                "item list (empty those), or empty it for a study of pairs.",
            )
            return None
        if self._lists_failed:
            return None
        if targets is not None:
            return targets
        if items is None and tokens is None:
            self.add_error("tokens_text", "Give a token list, an item list or a target list.")
        return items if items is not None else tokens

    def _question(self, data: dict[str, Any]) -> None:
        """The question for the study's kind: the other kind's default becomes this kind's, and
        a question that does not suit the kind is an error (only when the kind is known)."""
        if data.get("question") is None or not self._kind_known:
            return
        data["question"] = questions.for_kind(data["question"], self.targets)
        if problem := questions.question_error(data["question"], self.targets):
            self.add_error("question", problem)

    def design_options(self) -> dict[str, int]:
        """The chosen design's options that were given (the others take their defaults)."""
        return given_options(self.cleaned_data.get("design") or "", self.cleaned_data)

    def clean(self) -> dict[str, Any]:
        # Every check runs, whatever else failed: the page lists all problems at once.
        data = super().clean()
        areas = self._areas()
        self._question(data)
        parameters = {k: data.get(k) for k in ("n_ballots", "alpha", "m", "design")}
        bad = creating.parameter_errors(**parameters, design_options=self.design_options())
        for field, message in bad.items():
            self.add_error(field, message)
        if areas is None or bad or None in parameters.values() or self.has_error("seed"):
            return data
        try:
            self.preview = creating.preview_study(
                areas, data["n_ballots"], data["alpha"], data["m"], data["design"], data["seed"],
                data.get("max_items_per_area"), self.design_options(), targets=self.targets,
            )  # fmt: skip
        except lifecycle.LifecycleError as exc:
            self.add_error(None, str(exc))
        self.areas = areas
        return data

    def keep_lists(self) -> None:
        """Show uploaded lists in their text boxes, so the next step needs no upload again, and
        the question as the study will store it (a target study's default)."""
        kept = dict(getattr(self, "kept_lists", None) or {})
        question = getattr(self, "cleaned_data", {}).get("question")
        if question is not None and question != self.data.get("question"):
            kept["question"] = question
        if kept:
            data = cast(QueryDict, self.data).copy()
            for name, text in kept.items():
                data[name] = text
            self.data = data

    def study_options(self) -> dict[str, Any]:
        """Keyword arguments of :func:`creating.create_study` besides the areas."""
        d = self.cleaned_data
        parameters = {
            k: d[k]
            for k in (
                "n_ballots", "alpha", "m", "design", "estimator", "seed", "max_items_per_area",
                "allow_ties", "per_voter_cap", "lease_seconds", "auto_open",
            )
        }  # fmt: skip
        return {
            **parameters, "design_options": self.design_options(), "targets": self.targets,
            **self.texts(),
        }  # fmt: skip


def _after(names: tuple[str, ...], anchor: str, extra: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` with ``extra`` inserted after ``anchor`` (unchanged without it)."""
    if anchor not in names:
        return names
    at = names.index(anchor) + 1
    return (*names[:at], *extra, *names[at:])
