"""The form of a model to evaluate against a finished study: its name and its scores or vectors
file, stored and queued by :func:`collector.evaluation.submitting.submit`."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings

from collector.evaluation import submitting
from collector.models import Evaluation, Study


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
        help_text="UTF-8 text (word2vec binary excepted), not compressed; lines starting with "
        "# are comments. The file is read and checked after the upload, on the model's page.",
    )

    def submit(self, study: Study, created_by: Any) -> Evaluation:
        """Store the valid form's file and a queued evaluation (the job reads the file); raises
        :class:`collector.evaluation.submitting.EvaluationRefused`, storing nothing."""
        d = self.cleaned_data
        return submitting.submit(
            study, d["name"], d["file"], d["source"],
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
