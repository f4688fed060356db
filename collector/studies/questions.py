"""A study's question: the area study's text, or a target study's template.

A target study's question names each comparison's target where it says ``{target}`` (default
:data:`collector.models.DEFAULT_TARGET_QUESTION`, "Which is more related to {target}?"); an
area study's question has no target. The rule is one function, :func:`question_error`, which
creating a study, editing its texts and the new-study form all apply; :func:`for_kind` moves a
question left at one kind's default to the other kind's. The voter pages split the template at
the placeholder (:func:`template_parts`) and put the target, escaped, between the parts.
"""

from __future__ import annotations

from collector.models import DEFAULT_QUESTION, DEFAULT_TARGET_QUESTION

__all__ = ["PLACEHOLDER", "default_question", "for_kind", "question_error", "template_parts"]

PLACEHOLDER = "{target}"


def default_question(targets: bool) -> str:
    """The default question of a target study (``targets``) or of an area study."""
    return DEFAULT_TARGET_QUESTION if targets else DEFAULT_QUESTION


def for_kind(question: str, targets: bool) -> str:
    """``question``, or this kind's default when it is the other kind's default (a form left at
    its initial question, or a duplicate whose list changed kind)."""
    if question.strip() == default_question(not targets):
        return default_question(targets)
    return question


def question_error(question: str, targets: bool) -> str | None:
    """What is wrong with ``question`` for a target study (``targets``) or an area study."""
    if targets and PLACEHOLDER not in question:
        return (
            f"A target study's question shows each comparison's target where it says "
            f"{PLACEHOLDER}: put {PLACEHOLDER} in it (e.g. “{DEFAULT_TARGET_QUESTION}”)."
        )
    if not targets and PLACEHOLDER in question:
        return (
            f"Only a target study's question has a {PLACEHOLDER}: this study compares pairs, "
            f"so voters would read “{PLACEHOLDER}” as written. Remove it."
        )
    return None


def template_parts(template: str) -> list[str]:
    """The question's text around each ``{target}`` (one part: no target in it).

    >>> template_parts("Which is more related to {target}?")
    ['Which is more related to ', '?']
    """
    return template.split(PLACEHOLDER)
