"""``GET /healthz``, the load balancer's health check: an answer from the process alone."""

from __future__ import annotations


def test_the_health_check_answers_ok_without_touching_the_database_or_setting_a_cookie(client):
    # No django_db mark: any query would raise.
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.content == b"ok\n" and r["Content-Type"].startswith("text/plain")
    assert not r.cookies
