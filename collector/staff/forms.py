"""The staff's study form: parses the token or item list and checks the parameters.

A valid form carries ``areas`` (parsed input) and ``preview`` (the plan with its warnings), so
the view can show the plan before anything is created.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings

from collector.evaluation import submitting
from collector.models import DEFAULT_QUESTION, Evaluation, Study
from collector.studies import creating, importing, lifecycle


class StudyForm(forms.Form):
    name = forms.CharField(max_length=200)
    question = forms.CharField(max_length=300, initial=DEFAULT_QUESTION)
    instructions = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        required=False,
        help_text="Shown to voters before they start; leave blank for the default text.",
    )
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
    max_items_per_area = forms.IntegerField(
        label="At most K items per area",
        min_value=1,
        required=False,
        help_text="Optional seeded random sample of each area's items.",
    )
    n_ballots = forms.IntegerField(label="Ballots (n_b)", initial=7)
    alpha = forms.FloatField(label="Kept fraction (alpha)", initial=0.5)
    m = forms.IntegerField(label="Comparisons per item (M)", initial=20)
    design = forms.ChoiceField(choices=Study.Design.choices, initial=Study.Design.ADAPTIVE)
    estimator = forms.ChoiceField(
        choices=Study.Estimator.choices, initial=Study.Estimator.RESCALED_BORDA
    )
    seed = forms.IntegerField(initial=0, min_value=0, max_value=2**62)
    allow_ties = forms.BooleanField(label="Allow “can't decide”", initial=True, required=False)
    per_voter_cap = forms.IntegerField(label="Per-voter cap per ballot", initial=100, min_value=1)
    lease_seconds = forms.IntegerField(label="Lease (seconds)", initial=300, min_value=10)
    auto_open = forms.BooleanField(
        label="Open each next ballot at once", initial=False, required=False
    )
    completion_code = forms.CharField(
        max_length=32, required=False, help_text="Blank: a random code."
    )
    redirect_url = forms.URLField(
        required=False, assume_scheme="https", help_text="e.g. the Prolific completion link."
    )
    licence = forms.CharField(
        max_length=200,
        required=False,
        help_text="The published dataset's licence, e.g. CC BY 4.0 (printed in its card).",
    )

    areas: list[importing.AreaSpec]
    preview: dict[str, Any]

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

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        limit = settings.MAX_UPLOAD_BYTES
        try:
            tokens, items = self._source("tokens"), self._source("items")
            areas = importing.parse_tokens(tokens, max_bytes=limit) if tokens else None
            if items is not None:
                areas = importing.parse_items(items, max_bytes=limit, tokens=areas)
                data["items_text"] = items.decode("utf-8-sig")
            if tokens is not None:
                data["tokens_text"] = tokens.decode("utf-8-sig")
        except importing.ImportFailed as exc:
            raise forms.ValidationError(exc.errors) from None
        if areas is None:
            raise forms.ValidationError("Give a token list or an item list.")
        try:
            self.preview = creating.preview_study(
                areas, data["n_ballots"], data["alpha"], data["m"], data["design"], data["seed"],
                data.get("max_items_per_area"),
            )  # fmt: skip
        except lifecycle.LifecycleError as exc:
            raise forms.ValidationError(str(exc)) from None
        self.areas = areas
        return data

    def study_options(self) -> dict[str, Any]:
        """Keyword arguments of :func:`creating.create_study` besides the areas."""
        d = self.cleaned_data
        options = {
            k: d[k]
            for k in (
                "name", "question", "instructions", "n_ballots", "alpha", "m", "design",
                "estimator", "seed", "max_items_per_area", "allow_ties", "per_voter_cap",
                "lease_seconds", "auto_open", "redirect_url", "licence",
            )
        }  # fmt: skip
        if d.get("completion_code"):
            options["completion_code"] = d["completion_code"]
        return options


class EvaluationForm(forms.Form):
    """A model to evaluate against a finished study: its name and its scores or vectors file."""

    name = forms.CharField(max_length=100, help_text="Shown on the leaderboard; unique per study.")
    source = forms.ChoiceField(
        label="File holds",
        choices=[
            ("scores", "scores per item: token_a,token_b,score or item_id,score (CSV/TSV)"),
            ("vectors", "word vectors (cosine of the two tokens' vectors)"),
        ],
        initial="scores",
    )
    vectors_format = forms.ChoiceField(
        label="Vectors format",
        required=False,
        choices=[
            ("", "detect"),
            ("word2vec", "word2vec text"),
            ("word2vec-binary", "word2vec binary"),
            ("glove", "GloVe text (no header)"),
            ("fasttext", "fastText .vec"),
        ],
    )
    missing = forms.ChoiceField(
        label="Items the model cannot score",
        choices=Evaluation.Missing.choices,
        initial="skip",
        required=False,
        help_text="Skip: evaluate the scored items (the leaderboard shows how many). "
        "Last: rank them below every scored item.",
    )
    file = forms.FileField(
        label="Scores or vectors file",
        help_text="UTF-8 text (word2vec binary excepted); lines starting with # are comments.",
    )

    def submit(self, study: Study, created_by: Any) -> Evaluation:
        """Read the valid form's file and store the evaluation (queued); raises
        :class:`collector.evaluation.submitting.EvaluationRefused`, storing nothing."""
        d = self.cleaned_data
        with submitting.upload_path(d["file"]) as path:
            return submitting.submit(
                study, d["name"], path, d["source"],
                vectors_format=d["vectors_format"] or None, missing=d["missing"],
                filename=d["file"].name, created_by=created_by,
            )  # fmt: skip

    def clean_missing(self) -> str:
        return self.cleaned_data.get("missing") or Evaluation.Missing.SKIP

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if upload.size > settings.EVALUATION_MAX_UPLOAD_BYTES:
            raise forms.ValidationError(
                f"The file is {upload.size:,} bytes, over the limit of "
                f"{settings.EVALUATION_MAX_UPLOAD_BYTES:,} bytes."
            )
        return upload
