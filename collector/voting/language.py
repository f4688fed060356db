"""The language of a study's voter pages.

Staff pick it per study (``Study.language``, one of ``settings.LANGUAGES``); with
``Study.browser_language`` the browser's ``Accept-Language`` wins when it names a shipped language.
Only the pages' own texts are translated: what staff wrote (name, question, instructions, contact)
is shown as written. Staff pages stay English (no locale middleware: the voter views activate the
language themselves).

The JSON endpoints answer in the language the voter's last page was in, kept in the session
(:func:`remember`), so a vote costs no study query to find its language.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.translation.trans_real import parse_accept_lang_header

__all__ = ["chosen", "mark", "remember", "remembered", "shipped"]


def _session_key(slug: str) -> str:
    return f"voter-language:{slug}"


def shipped(code: str) -> bool:
    return code in dict(settings.LANGUAGES)


def chosen(request: HttpRequest, study_language: str, browser: bool) -> str:
    """The pages' language: the browser's best shipped one when ``browser``, else the study's."""
    if browser:
        header = request.META.get("HTTP_ACCEPT_LANGUAGE", "")
        for code, _quality in parse_accept_lang_header(header):
            if code == "*":
                break
            try:
                return translation.get_supported_language_variant(code)
            except LookupError:
                continue
    return study_language if shipped(study_language) else settings.LANGUAGE_CODE


def mark(response: HttpResponse, code: str, browser: bool) -> HttpResponse:
    """Say the response's language (and that it depends on the browser's when it does)."""
    response["Content-Language"] = code
    if browser:
        patch_vary_headers(response, ["Accept-Language"])
    return response


def remember(request: HttpRequest, slug: str, code: str) -> None:
    """Keep the voter's page language for the JSON endpoints (written only when it changes)."""
    if request.session.get(_session_key(slug)) != code:
        request.session[_session_key(slug)] = code


def remembered(request: HttpRequest, slug: str) -> str:
    code = request.session.get(_session_key(slug))
    return code if isinstance(code, str) and shipped(code) else settings.LANGUAGE_CODE
