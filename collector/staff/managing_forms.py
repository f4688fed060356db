"""The forms of managing a study: its texts (what voters read, where they go, the codes they get;
also part of the new-study form), editing them while the study runs, and the typed confirmation
of a deletion. Fields come from the Study model, so their limits are the columns' own.

Forms here group their fields in fieldsets (:class:`Fieldsets`) and every staff form page lists
all of a form's errors at its top (``staff/_form_errors.html``).
"""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models

from collector import wording
from collector.models import Study
from collector.studies import lifecycle

__all__ = [
    "CODES",
    "DeleteStudyForm",
    "ErrorSummary",
    "Fieldsets",
    "StudyEditForm",
    "StudyTextsFields",
]

CODES = ("completion_code", "no_consent_code", "partial_code", "excluded_code")
MAX_STRANDED_MINUTES = 7 * 24 * 60
code_characters = RegexValidator(
    r"^[A-Za-z0-9_-]+$", "Letters, digits, - and _ only: voters type or paste the code."
)


def model_field(name: str, **overrides: Any) -> forms.Field:
    """The form field of ``Study.<name>`` (its length, choices and help), without the model's
    default as initial value (a random code would be drawn once per page)."""
    field = cast(models.Field, Study._meta.get_field(name)).formfield(**overrides)
    assert field is not None
    field.initial, field.show_hidden_initial = overrides.get("initial"), False
    return field


class ErrorSummary:
    """For the summary at the top of a form's page: how many errors it lists."""

    def error_count(self) -> int:
        return wording.error_count(self)


class Fieldsets(ErrorSummary):
    """Fields shown in groups: ``fieldsets`` lists (legend, help, field names). Fields no group
    names are shown in a last group, so a field added later is never left off the page (hidden
    fields aside: the page puts them in the form as they are)."""

    fieldsets: tuple[tuple[str, str, tuple[str, ...]], ...] = ()

    def grouped(self) -> list[tuple[str, str, list[forms.BoundField]]]:
        form: forms.Form = self  # type: ignore[assignment]
        named = {name for _legend, _help, names in self.fieldsets for name in names}
        groups = [
            (legend, help_text, [form[n] for n in names if n in form.fields])
            for legend, help_text, names in self.fieldsets
        ]
        rest = [form[n] for n in form.fields if n not in named and not form[n].is_hidden]
        if rest:
            groups.append(("More settings", "", rest))
        return [g for g in groups if g[2]]


TEXT_FIELDSETS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("The study", "What voters are asked.", ("name", "question", "instructions")),
    (
        "The voter pages",
        "The pages' own texts come in the chosen language; what you write above is shown as "
        "written.",
        ("language", "browser_language", "contact"),
    ),
    (
        "Codes and the way back to the platform",
        "Each way out of the study has its own code, so the platform can pay, pay in part or "
        "reject.",
        (*CODES, "redirect_url", "auto_redirect", "stranded_minutes"),
    ),
    ("The dataset", "", ("licence",)),
)


class StudyTextsFields(Fieldsets, forms.Form):
    """The study's texts: what :data:`lifecycle.EDITABLE_TEXTS` names, and their rules."""

    name = model_field("name")
    question = model_field(
        "question",
        initial=Study._meta.get_field("question").default,
        help_text="A target study's question shows each comparison's target where it says "
        "{target} (its default, “Which is more related to {target}?”, comes in the voter pages' "
        "language); a study of pairs' has no {target}.",
    )
    instructions = model_field(
        "instructions",
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Shown to voters before they start; leave blank for the default text.",
    )
    contact = model_field(
        "contact",
        label="Contact and ethics approval",
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    language = forms.ChoiceField(
        choices=lambda: settings.LANGUAGES, label="Voter pages' language", initial="en"
    )
    browser_language = model_field(
        "browser_language",
        label="Use the browser's language when the pages have it",
        help_text="The language above is the fallback.",
    )
    completion_code = model_field("completion_code", required=False, validators=[code_characters])
    no_consent_code = model_field("no_consent_code", required=False, validators=[code_characters])
    partial_code = model_field("partial_code", required=False, validators=[code_characters])
    excluded_code = model_field("excluded_code", required=False, validators=[code_characters])
    redirect_url = model_field("redirect_url", label="Redirect URL", assume_scheme="https")
    auto_redirect = model_field(
        "auto_redirect",
        label="Send voters to the redirect URL at once when they are done",
        help_text="Otherwise their last page shows the code and a button to the URL.",
    )
    stranded_minutes = model_field(
        "stranded_minutes",
        label="Minutes before a waiting voter is offered the partial code",
        initial=10,
        max_value=MAX_STRANDED_MINUTES,
    )
    licence = model_field("licence")

    fieldsets = TEXT_FIELDSETS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for code in CODES:
            self.fields[
                code
            ].help_text = f"{self.fields[code].help_text} Letters, digits, - and _.".lstrip()
        self.fields["completion_code"].help_text = (
            "For voters who answered their quota. " + self.fields["completion_code"].help_text
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        seen: dict[str, str] = {}
        for code in CODES:
            value = data.get(code)
            if not value:
                continue
            if value in seen:
                other = str(self.fields[seen[value]].label).lower()
                self.add_error(
                    code,
                    f"The same code as the {other}: each way out needs its own code, or the "
                    "platform cannot tell them apart.",
                )
            else:
                seen[value] = code
        return data

    def texts(self) -> dict[str, Any]:
        """The valid form's texts, as :func:`lifecycle.update_texts` takes them (a blank code
        left out: the model draws one)."""
        d = self.cleaned_data
        return {k: d[k] for k in lifecycle.EDITABLE_TEXTS if k in d and (k not in CODES or d[k])}


class StudyEditForm(StudyTextsFields):
    """A created study's texts, editable while it runs; every code is required."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for code in CODES:
            self.fields[code].required = True

    @classmethod
    def of(cls, study: Study) -> StudyEditForm:
        return cls(initial={k: getattr(study, k) for k in lifecycle.EDITABLE_TEXTS})


class DeleteStudyForm(ErrorSummary, forms.Form):
    """Deleting a study: its slug, typed, confirms it."""

    confirm = forms.CharField(label="Type the study's slug to confirm", max_length=100)

    def __init__(self, study: Study, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.study = study
        self.fields["confirm"].widget.attrs.update(autocomplete="off", spellcheck="false")

    def clean_confirm(self) -> str:
        typed = self.cleaned_data["confirm"].strip()
        if typed != self.study.slug:
            raise forms.ValidationError(
                f"That is not this study's slug; type {self.study.slug} exactly. "
                "Nothing was deleted."
            )
        return typed
