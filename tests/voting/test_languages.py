"""The voter pages in the study's language (or the browser's, where the study allows it), the
staff's texts as written, right-to-left readiness, and staff pages in English."""

from __future__ import annotations

import json
import re

import pytest
from django.conf import settings
from django.test import Client, override_settings

from tests.factories import staff_user
from tests.voting.voter_client import PROLIFIC, answer, answer_all, current, start

pytestmark = pytest.mark.django_db


def script_texts(html: str) -> dict:
    found = re.search(r'<script id="voting-messages" type="application/json">(.*?)</script>', html)
    assert found, "no voting-messages"
    return json.loads(found.group(1))


def test_a_study_in_italian_shows_the_voter_pages_in_italian(client, make_study):
    study = make_study(slug="it", cap=2, language="it", name="Parole", question="Which pair?")
    r = client.get("/s/it/" + PROLIFIC)
    html = r.content.decode()
    assert r["Content-Language"] == "it"
    assert '<html lang="it" dir="ltr">' in html
    assert "Che cosa dovrai fare" in html and "Accetto – inizia" in html
    assert "Non accetto" in html and "vendite – marketing" in html
    assert '<h1 lang="it">Parole</h1>' in html  # the staff's texts stay as written
    start(client, "it", PROLIFIC)
    vote = client.get("/s/it/vote/").content.decode()
    assert "Which pair?" in vote and "Non so decidere" in vote
    assert '<label for="progress-bar" id="progress-text">0 di 2 completate</label>' in vote
    texts = script_texts(vote)
    assert texts["progress"] == "{answered} di {quota} completate"
    assert texts["retrying"].startswith("Problema di connessione")
    answer_all(client, "it")
    done = client.get("/s/it/done/").content.decode()
    assert "Grazie!" in done and "Il tuo codice di completamento:" in done
    assert study.completion_code in done


def test_a_refusal_is_told_in_the_voters_language(make_study):
    make_study(slug="de", language="de")
    mine, theirs = Client(), Client()
    start(mine, "de")
    start(theirs, "de")
    mine.get("/s/de/vote/")
    r = answer(mine, "de", current(theirs, "de")["comparison"]["id"])
    assert r.status_code == 409
    assert r.json()["detail"].startswith("Diese Frage ist Ihnen nicht (mehr) zugeteilt")
    assert Client().get("/s/de/next").json()["detail"].startswith("Ihre Sitzung ist abgelaufen")


def test_the_browser_language_wins_where_the_study_allows_it(client, make_study):
    make_study(slug="b", language="it", browser_language=True)
    r = client.get("/s/b/", HTTP_ACCEPT_LANGUAGE="ja;q=1, de-AT;q=0.9, fr;q=0.8")
    assert r["Content-Language"] == "de" and "Ich stimme zu" in r.content.decode()
    assert "Accept-Language" in r["Vary"]
    r = client.get("/s/b/", HTTP_ACCEPT_LANGUAGE="ja, zh")  # none shipped: the study's
    assert r["Content-Language"] == "it"
    r = client.get("/s/b/", HTTP_ACCEPT_LANGUAGE="es-MX,es;q=0.9")
    assert r["Content-Language"] == "es" and "Acepto – empezar" in r.content.decode()


def test_the_browser_language_is_ignored_unless_the_study_allows_it(client, make_study):
    make_study(slug="f", language="fr")
    r = client.get("/s/f/", HTTP_ACCEPT_LANGUAGE="de")
    assert r["Content-Language"] == "fr" and "J’accepte – commencer" in r.content.decode()
    assert "Accept-Language" not in r.get("Vary", "")


@override_settings(LANGUAGES=[*settings.LANGUAGES, ("ar", "العربية")])
def test_a_right_to_left_language_turns_the_page_and_its_arrow_keys(client, make_study):
    make_study(slug="rtl", language="ar")
    consent = client.get("/s/rtl/").content.decode()
    assert '<html lang="ar" dir="rtl">' in consent
    assert "<kbd>→</kbd> or <kbd>1</kbd>" in consent  # the first pair sits on the right
    start(client, "rtl")
    vote = client.get("/s/rtl/vote/").content.decode()
    assert 'data-first-key="ArrowRight" data-second-key="ArrowLeft"' in vote
    assert 'aria-keyshortcuts="ArrowRight 1"' in vote


def test_the_stylesheet_has_no_left_or_right_specific_rules():
    css = (settings.BASE_DIR / "static/voting/voting.css").read_text()
    rules = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    assert not re.search(r"\b(left|right)\b", rules)


def test_staff_pages_stay_english(client, make_study):
    owner = staff_user(client)
    make_study(slug="it", language="it", browser_language=True, created_by=owner)
    html = client.get("/staff/it/", HTTP_ACCEPT_LANGUAGE="it").content.decode()
    assert 'lang="en"' in html and "Accetto" not in html
