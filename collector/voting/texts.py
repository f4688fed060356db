"""The voter pages' fixed texts that live outside the templates, translated like them.

- :data:`NOTICES`: the sentences a voter page shows for a ``?notice=<key>`` in its URL. Only these
  keys mean anything; the URL never carries text, so nothing from it is ever shown.
- :func:`script_messages`: the voting and waiting scripts' messages, handed to them with
  ``json_script`` (the scripts are files: the Content-Security-Policy forbids inline ones).
  ``{name}`` marks a value the script fills in.
- :func:`question_template` and :func:`question_parts`: a target study's question, its default
  translated ("Which is more related to {target}?"); what staff wrote is shown as written.
"""

from __future__ import annotations

from django.http import QueryDict
from django.utils.translation import gettext, gettext_lazy

from collector.models import Study
from collector.studies import questions

__all__ = [
    "NOTICES",
    "notice",
    "progress",
    "question_parts",
    "question_template",
    "script_messages",
]

NOTICES = {
    # A vote refused because its ballot closed early (the refusals "voided" and "ballot_closed").
    "closed": gettext_lazy(
        "This round of questions was closed early, so your last answer could not be counted. "
        "Thank you all the same: everything you answered before it was recorded."
    ),
}


def notice(params: QueryDict) -> str | None:
    """The notice named by the query string's ``notice`` key, if it is one of ours."""
    key = params.get("notice", "")
    return key if key in NOTICES else None


def script_messages() -> dict[str, str]:
    """The voting and waiting scripts' messages in the active language."""
    return {
        "progress": gettext("{answered} of {quota} answered"),
        "question": gettext("Question {number}: {left}, or {right}."),
        # A target study's comparison: {question} names the target, {left} and {right} are the
        # two candidates.
        "targetQuestion": gettext("Question {number}: {question} {left}, or {right}."),
        "reloadFailed": gettext("We could not load the next pair. Please reload the page."),
        "sessionEnded": gettext("Your session has ended."),
        "reloadToContinue": gettext("{reason} Reload the page to continue."),
        "notAccepted": gettext("That answer was not accepted."),
        "nextPair": gettext("{reason} Here is your next pair."),
        "retrying": gettext("Connection problem: trying again in {seconds} s…"),
        # Over the voting rate limit (429): the answer waits for the server's Retry-After.
        "slowDown": gettext(
            "You are answering faster than this study allows. Please wait: your answer is sent "
            "in {seconds} s."
        ),
        "unreachable": gettext(
            "We could not reach the server. Your answer is not lost: press “Try again”."
        ),
        # The wait page's script.
        "stillNothing": gettext("Still nothing new. Checking again in 10 seconds…"),
        "checkFailed": gettext("Could not check just now. Trying again in 10 seconds…"),
        "offline": gettext("No connection. Trying again in 10 seconds…"),
    }


def progress(answered: int, quota: int) -> str:
    """The voting page's progress line, as its script writes it."""
    return script_messages()["progress"].format(answered=answered, quota=quota)


def question_template(study: Study) -> str:
    """The question voters read, ``{target}`` still in it: a target study's default template
    in the active language, else the study's question as staff wrote it."""
    if study.targets and study.question == questions.default_question(True):
        # Translators: {target} is replaced by a word, the target; keep {target} as it is.
        return gettext("Which is more related to {target}?")
    return study.question


def question_parts(study: Study) -> list[str] | None:
    """A target study's question as the text around each target (the page puts each
    comparison's target, escaped, between the parts); None for an area study. A question
    without ``{target}`` (which a study can no longer be given) gets the target after it."""
    if not study.targets:
        return None
    template = question_template(study)
    if questions.PLACEHOLDER not in template:
        template = f"{template} {questions.PLACEHOLDER}"
    return questions.template_parts(template)
