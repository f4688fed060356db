"""The defaults README.md's configuration table states are the settings' own (read in a process
where none of their variables is set)."""

from __future__ import annotations

from pathlib import Path

from tests.defaults import default_settings

README = Path(__file__).resolve().parent.parent / "README.md"
RATES = ("VOTING_TOKEN_RATE", "VOTING_IP_RATE", "VOTING_REGISTER_RATE")


def documented(variable: str) -> str:
    """The default column of the README's configuration row that starts with ``variable``."""
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith(f"| `{variable}`"):
            return line.split("|")[2].strip()
    raise AssertionError(f"README.md documents no {variable}")


def test_the_bound_of_pending_evaluations_defaults_to_the_documented_5() -> None:
    values = default_settings("EVALUATION_MAX_QUEUED", unset=("EVALUATION_MAX_QUEUED",))
    assert documented("EVALUATION_MAX_QUEUED") == "5"
    assert values["EVALUATION_MAX_QUEUED"] == 5


def test_the_voting_rates_default_to_the_documented_limits() -> None:
    rates = default_settings("REST_FRAMEWORK", unset=RATES)["REST_FRAMEWORK"]
    assert documented("VOTING_TOKEN_RATE") == "`120/min`, `6000/min`, `600/hour`"
    assert rates["DEFAULT_THROTTLE_RATES"] == {
        "voting_token": "120/min", "voting_ip": "6000/min", "voting_register": "600/hour"
    }  # fmt: skip


def test_a_deployment_consumes_the_queues_docker_compose_names() -> None:
    values = default_settings(
        "CELERY_QUEUE_CLOSES", "CELERY_QUEUE_EVALUATIONS", unset=("CELERY_QUEUE_PREFIX",)
    )
    assert values == {"CELERY_QUEUE_CLOSES": "closes", "CELERY_QUEUE_EVALUATIONS": "evaluations"}
    compose = (README.parent / "docker-compose.yml").read_text(encoding="utf-8")
    assert '"-Q", "closes"' in compose and '"-Q", "evaluations"' in compose
