"""The voting SQL has one source of truth: each function the database runs is its file in
``collector/voting/sql/``, the files migrations installed never change (a change is a new file
and a new migration), and Python reads the vote function's columns by name."""

from __future__ import annotations

import hashlib
import importlib
import pkgutil
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from collector import migrations as migration_package
from collector.models import Study, Vote, Voter
from collector.voting import store

pytestmark = pytest.mark.django_db

SQL = Path(store.__file__).resolve().parent / "sql"

# sha256 of every SQL file a migration reads, as it was when that migration shipped (the
# migration in the comment). A new migration that reads a new file adds its line; none changes.
SHIPPED = {
    "history/vote_v1.sql": "a56b8c3ab3526f7b2ed75ed80c885d4bcd969602ef17d3d3a9fef1628560872b",
    "history/vote_v2.sql": "2d2f68bd346e8f7f53f86de626e70448d9eed984fb701c53d1275090d26ad117",
    "history/vote_v3.sql": "9fc6fd05d81d4cec4e0f4998f57ef3e5e2c32bbbffe2f416d69aac956515c079",
    "exclude_voter.sql": "94279a705713fbbd7edbaa4fde3d7a4c628891ce68e86b639146b8f4326d968e",
    "history/vote_v4.sql": "0cff16408fa6c3b567096e8c883ab262a143129dcbc3c5d48cf8dbf75ab41e29",
    "vote_v5.sql": "fc8008f33a8c40dd0f23723b204afb39b5331c9e8705fbfe3821ea39749302dd",
}  # 0004, 0006, 0009 (v3 and exclude_voter), 0013, 0033
# The same for SQL files elsewhere in collector/ (relative to it).
SHIPPED_ELSEWHERE = {
    "audit/sql/audit_append_only.sql": (
        "92bb72c63f906763c0fc9159fae2e5472e63c35d119901db4f2241c1f0c98a87"
    ),
}  # 0021
COLLECTOR = SQL.parent.parent
V5 = (
    "collector_vote_v5(text, bigint, text, bigint, varchar, integer, timestamptz, boolean,"
    " integer, double precision)"
)


def files_the_migrations_read(monkeypatch) -> set[str]:
    """The SQL files (relative to collector/) that the migration modules read, found
    by importing each of them afresh and noting every file it opens."""
    read: set[str] = set()
    original = Path.read_text

    def noting(path: Path, *args, **kwargs) -> str:
        if path.suffix == ".sql":
            read.add(path.resolve().relative_to(COLLECTOR).as_posix())
        return original(path, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", noting)
    for module in pkgutil.iter_modules(migration_package.__path__):
        importlib.reload(importlib.import_module(f"collector.migrations.{module.name}"))
    return read


def test_every_sql_file_a_migration_reads_is_byte_for_byte_what_it_shipped(monkeypatch):
    read = files_the_migrations_read(monkeypatch)
    pinned = {f"voting/sql/{name}": digest for name, digest in SHIPPED.items()}
    pinned.update(SHIPPED_ELSEWHERE)
    assert read == set(pinned), "a migration reads a file without a pinned sha256 (or no more)"
    changed = [
        name
        for name, digest in pinned.items()
        if hashlib.sha256((COLLECTOR / name).read_bytes()).hexdigest() != digest
    ]
    assert changed == [], f"SQL a migration installed was edited: {changed}"


def test_the_live_folder_holds_one_vote_function_the_one_python_calls():
    live = sorted(p.name for p in SQL.glob("vote_v*.sql"))
    assert live == ["vote_v5.sql"]
    assert "collector_vote_v5(" in store._VOTE_SQL
    kept = sorted(p.name for p in (SQL / "history").glob("*.sql"))
    assert kept == ["vote_v1.sql", "vote_v2.sql", "vote_v3.sql", "vote_v4.sql"]


def functions_in(text: str) -> list[str]:
    return re.findall(r"CREATE OR REPLACE FUNCTION (\w+)\(", text)


@pytest.mark.parametrize("name", ["vote_v5.sql", "exclude_voter.sql"])
def test_each_installed_function_is_exactly_its_file(name):
    """The file, created afresh in a scratch schema, and the installed function have the same
    definition (pg_get_functiondef: arguments, result columns, body)."""
    assert_installed_as_in((SQL / name).read_text())


def assert_installed_as_in(text: str) -> None:
    """The one function ``text`` creates is installed (in public) exactly as ``text`` creates
    it."""
    (function,) = functions_in(text)
    with connection.cursor() as cur:
        cur.execute("CREATE SCHEMA sql_file_check")
        cur.execute("SET LOCAL search_path TO sql_file_check, public")
        cur.execute(text)
        cur.execute(
            "SELECT p.oid, n.nspname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
            " WHERE p.proname = %s ORDER BY n.nspname",
            [function],
        )
        found = {nsp: oid for oid, nsp in cur.fetchall()}
        assert set(found) == {"public", "sql_file_check"}, found
        cur.execute("SELECT pg_get_functiondef(%s)", [found["public"]])
        (installed,) = cur.fetchone()
        cur.execute("SELECT pg_get_functiondef(%s)", [found["sql_file_check"]])
        (from_file,) = cur.fetchone()
        cur.execute("DROP SCHEMA sql_file_check CASCADE")
        cur.execute("SET LOCAL search_path TO DEFAULT")
    assert installed == from_file.replace(f"sql_file_check.{function}(", f"public.{function}(")


def test_a_function_that_differs_from_its_file_is_told_apart():
    """The comparison above sees a one-character change of the body."""
    text = (SQL / "exclude_voter.sql").read_text()
    assert "RETURN -1;" in text
    with connection.cursor() as cur:
        cur.execute(text.replace("RETURN -1;", "RETURN -2;", 1))
        cur.execute("SELECT pg_get_functiondef('collector_exclude_voter'::regproc)")
        (installed,) = cur.fetchone()
        cur.execute("CREATE SCHEMA sql_file_check")
        cur.execute("SET LOCAL search_path TO sql_file_check, public")
        cur.execute(text)
        cur.execute("SELECT pg_get_functiondef('sql_file_check.collector_exclude_voter'::regproc)")
        (from_file,) = cur.fetchone()
    assert installed != from_file.replace("sql_file_check.", "public.", 1)


def test_python_reads_the_vote_function_by_column_name_whatever_else_it_returns(study, voter):
    """A database whose function returns more columns, in another order (version 3 as migration
    0009 installed it: is_check and address_full in the middle), still votes right."""
    shipped_v3 = (SQL / "history" / "vote_v3.sql").read_text()
    assert "OUT is_check boolean, OUT address_full boolean" in shipped_v3
    with connection.cursor() as cur:
        cur.execute(f"DROP FUNCTION {V5}")
        cur.execute(shipped_v3.replace("collector_vote_v3", "collector_vote_v5"))
    first = store.next_assignment(voter)
    assert first.pair is not None and (first.answered, first.quota) == (0, 5)
    vote, created, after = store.vote_and_next(voter, first.pair.id, "right", 1234)
    stored = Vote.objects.get()
    assert created and (vote.id, vote.comparison_id, vote.voter_id) == (
        stored.id,
        first.pair.id,
        voter.id,
    )
    assert (vote.choice, vote.response_ms, vote.ballot_id) == ("right", 1234, stored.ballot_id)
    assert after.pair is not None and after.pair.id != first.pair.id
    assert after.answered == 1 and after.pair.left.token_a and after.pair.right.token_b


def installed_vote_functions() -> list[str]:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT proname FROM pg_proc WHERE proname LIKE 'collector\\_vote\\_v%%'"
            " ORDER BY proname"
        )
        return [name for (name,) in cur.fetchall()]


def test_migration_0013_reverses_to_the_function_0009_shipped_and_forward_again(study):
    assert installed_vote_functions() == ["collector_vote_v5"]
    v4 = importlib.import_module("collector.migrations.0013_vote_function_v4").Migration
    (before,) = v4.dependencies  # the migration just before it
    with connection.cursor() as cur:  # the fixture's rows: their checks now, not at commit,
        cur.execute("SET CONSTRAINTS ALL IMMEDIATE")  # so later migrations may alter tables
    call_command("migrate", *before, verbosity=0)
    assert installed_vote_functions() == ["collector_vote_v3"]
    # Archived before archiving paused: version 4 reads paused_at alone, so 0013 sets it.
    archived_at = timezone.now()
    Study.objects.filter(pk=study.pk).update(archived_at=archived_at, paused_at=None)
    with connection.cursor() as cur:
        cur.execute(
            "SELECT array_agg(a ORDER BY a) FROM pg_proc p, unnest(p.proargnames) a"
            " WHERE p.proname = 'collector_vote_v3'"
        )
        (columns,) = cur.fetchone()
    assert {"is_check", "address_full"} <= set(columns)  # as 0009 shipped it
    call_command("migrate", "collector", verbosity=0)
    assert installed_vote_functions() == ["collector_vote_v5"]
    assert Study.objects.get(pk=study.pk).paused_at == archived_at
    newcomer = store.next_assignment(Voter.objects.create(study=study))
    assert newcomer.pair is None and newcomer.paused
    Study.objects.filter(pk=study.pk).update(archived_at=None, paused_at=None)
    assert store.next_assignment(Voter.objects.create(study=study)).pair is not None


def test_migration_0033_reverses_to_the_function_0013_shipped_and_forward_again(study, voter):
    assert installed_vote_functions() == ["collector_vote_v5"]
    v5 = importlib.import_module("collector.migrations.0033_vote_function_v5").Migration
    (before,) = v5.dependencies  # the migration just before it
    with connection.cursor() as cur:  # the fixture's rows: their checks now, not at commit,
        cur.execute("SET CONSTRAINTS ALL IMMEDIATE")  # so later migrations may alter tables
    call_command("migrate", *before, verbosity=0)
    assert installed_vote_functions() == ["collector_vote_v4"]
    assert_installed_as_in((SQL / "history" / "vote_v4.sql").read_text())
    call_command("migrate", "collector", verbosity=0)
    assert installed_vote_functions() == ["collector_vote_v5"]
    assert_installed_as_in((SQL / "vote_v5.sql").read_text())
    assert store.next_assignment(voter).pair is not None
