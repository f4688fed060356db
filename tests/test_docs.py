"""The docs stay true: what README.md and docs/*.md say about the code is checked against it.

The rules of each kind of claim are in tests/doc_claims.py's docstring. A finding names the doc,
its line and what is wrong; fix the doc (or the code). A variable the docs may name although the
settings do not read it goes in ``doc_claims.OTHER_VARIABLES`` with the file that reads it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import doc_claims, doc_lists
from tests.doc_claims import Doc, Finding

ROOT = Path(__file__).resolve().parent.parent
DOCS = doc_claims.project_docs()
README = next(doc for doc in DOCS if doc.name == "README.md")


def report(findings: list[Finding]) -> str:
    return "\n".join(map(str, findings))


def test_every_module_name_and_path_the_docs_give_exists() -> None:
    findings = [f for doc in DOCS for f in doc_claims.name_findings(doc)]
    assert not findings, report(findings)


def test_every_command_and_flag_in_the_docs_exists_and_no_refused_pair_is_shown_together() -> None:
    findings = [f for doc in DOCS for f in doc_claims.command_findings(doc)]
    assert not findings, report(findings)


def test_every_environment_variable_the_docs_name_is_read_by_the_settings_or_listed() -> None:
    findings = [f for doc in DOCS for f in doc_claims.env_findings(doc)]
    assert not findings, report(findings)


def test_every_variable_the_settings_read_is_in_the_readmes_configuration_table() -> None:
    read = doc_claims.settings_variables()
    assert "DATABASE_URL" in read and "LOG_LEVEL" in read  # the parser reads settings.py
    assert doc_claims.undocumented_variables(README, DOCS, read) == []


def test_the_readmes_configuration_defaults_are_the_settings_defaults() -> None:
    findings = doc_claims.default_findings(README)
    assert not findings, report(findings)


def test_every_figure_at_a_glance_in_the_readme_is_in_benchmarks() -> None:
    benchmarks = (ROOT / "BENCHMARKS.md").read_text()
    findings = doc_claims.figure_findings(README, benchmarks)
    assert not findings, report(findings)


@pytest.mark.parametrize("name", sorted(doc_claims.OTHER_VARIABLES))
def test_each_listed_variable_outside_the_settings_is_read_by_the_file_named(name: str) -> None:
    path, _reason = doc_claims.OTHER_VARIABLES[name]
    assert name not in doc_claims.settings_variables(), f"{name} is a setting: unlist it"
    assert f'"{name}"' in (ROOT / path).read_text(), f"{path} does not read {name}"


PLANTED = """# A stale doc

The score comes from `ranking.no_such_thing`, beside `ranking.ballots.BallotDriver.close`;
the reader is `ranking/no_such_reader.py`, beside `ranking/files/lines.py` and [a](docs/gone.md).

```sh
manage.py create_study --name X --tokens t.csv --no-such-flag --ballots 2 --alpha 0.5 --m 4 \\
    [--items i.csv | --targets g.csv]
manage.py create_study --name X (--tokens t.csv | --targets g.csv) --ballots 2 --alpha 0.5 --m 4
manage.py no_such_command SLUG
python -m ranking.simulate run --dist exponential --no-such-option
python -m ranking.simulate fit --votes votes.csv
NO_SUCH_VARIABLE=1 SWEEP_SECONDS=2 manage.py open_ballot SLUG
```

| limit | default | set by |
| --- | --- | --- |
| pace floor | 6 s | `collector.studies.pace.FLOOR_SECONDS`, `NO_SUCH_CONSTANT` |
| lockout | 15 minutes | `AXES_COOLOFF_MINUTES` |
| nothing | 1 | `NOT_A_SETTING_EITHER` |

| variable | default | meaning |
| --- | --- | --- |
| `LOG_LEVEL` | `DEBUG` | logging |
| `CONN_MAX_AGE`, `SWEEP_SECONDS` | 60 s, 30 | two |
| `NO_SUCH_PREFIX_*` | | staff |

| what | figure |
| --- | --- |
| something measured | 123.456 s (and 6.85 s, measured) |
"""


def test_the_checker_reports_each_kind_of_stale_claim_in_a_planted_doc() -> None:
    doc = Doc("planted.md", PLANTED)
    claims = {(f.kind, f.claim) for f in doc_claims.name_findings(doc)}
    assert claims == {
        ("name", "ranking.no_such_thing"),
        ("path", "ranking/no_such_reader.py"),
        ("link", "docs/gone.md"),
        ("name", "collector.studies.pace.NO_SUCH_CONSTANT"),
    }
    claims = {(f.kind, f.claim) for f in doc_claims.command_findings(doc)}
    assert claims == {
        ("flag", "manage.py create_study --no-such-flag"),
        ("flags", "manage.py create_study --tokens --targets"),
        ("command", "manage.py no_such_command"),
        ("flag", "python -m ranking.simulate run --no-such-option"),
    }
    claims = {(f.kind, f.claim) for f in doc_claims.env_findings(doc)}
    assert claims == {
        ("variable", "NO_SUCH_VARIABLE"),
        ("variable", "NOT_A_SETTING_EITHER"),
        ("variable", "NO_SUCH_PREFIX_*"),
    }
    claims = {(f.kind, f.claim) for f in doc_claims.default_findings(doc)}
    assert claims == {("default", "LOG_LEVEL"), ("default", "SWEEP_SECONDS")}
    benchmarks = (ROOT / "BENCHMARKS.md").read_text()
    claims = {(f.kind, f.claim) for f in doc_claims.figure_findings(doc, benchmarks)}
    assert claims == {("figure", "123.456")}


def test_the_checker_reports_a_variable_the_settings_read_that_the_readme_does_not_name() -> None:
    read = doc_claims.settings_variables('env.bool("BRAND_NEW", default=False)\n')
    assert read == {"BRAND_NEW": [False]}
    assert doc_claims.undocumented_variables(README, DOCS, read) == ["BRAND_NEW"]


def test_the_architecture_table_names_every_module_of_the_product() -> None:
    assert doc_lists.missing_modules(doc_lists.read(ROOT / "docs" / "architecture.md")) == []


def test_every_management_command_is_shown_in_the_docs() -> None:
    assert "forget_participant" in doc_lists.commands()
    assert doc_lists.undocumented_commands(DOCS) == []


def test_the_team_docs_name_every_command_that_takes_as() -> None:
    team = doc_lists.read(ROOT / "docs" / "team.md")
    said = doc_claims.section(team, "Commands and `--as`")
    commands = doc_lists.commands_taking_as()
    assert "release_study" in commands and "demo" not in commands
    assert [name for name in commands if f"`{name}`" not in said] == []


def test_the_team_docs_list_every_audit_action_with_the_words_history_shows() -> None:
    from collector.audit.trail import ACTIONS

    assert doc_lists.audit_table(doc_lists.read(ROOT / "docs" / "team.md")) == ACTIONS


def test_the_list_checks_report_a_module_command_and_action_a_doc_leaves_out() -> None:
    table = "| module | holds |\n| --- | --- |\n| `collector/voting/` | `store` |\n"
    missing = doc_lists.missing_modules(Doc("docs/architecture.md", table))
    assert "collector/voting/api.py" in missing and "collector/voting/store.py" not in missing
    assert "collector/jobs.py" in missing and "collector/studies/" in missing
    assert "forget_participant" in doc_lists.undocumented_commands([Doc("x.md", "manage.py demo")])
    actions = "| action | History says |\n| --- | --- |\n| `study.pause` | paused the study |\n"
    said = doc_lists.audit_table(Doc("docs/team.md", actions))
    assert said == {"study.pause": "paused the study"}


def test_the_voter_docs_name_exactly_the_languages_of_the_setting(settings) -> None:
    voters = doc_lists.read(ROOT / "docs" / "voters.md")
    named = re.findall(r"\(`([a-z]{2,3})`\)", doc_claims.section(voters, "Languages"))
    assert sorted(named) == sorted(code for code, _name in settings.LANGUAGES)
