"""The voting rules' function, version 2 (collector/voting/sql/history/vote_v2.sql): the same
rules and outcomes as version 1, with the open-comparison probe's limit a constant (a LIMIT
argument made PostgreSQL re-plan that statement on every call). Version 1 is dropped."""

from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parent.parent / "voting" / "sql"
HISTORY = SQL / "history"  # superseded versions, kept for the migrations that installed them
V1 = "collector_vote_v1(text, bigint, text, bigint, varchar, integer, timestamptz, integer, boolean)"
V2 = "collector_vote_v2(text, bigint, text, bigint, varchar, integer, timestamptz, boolean)"


class Migration(migrations.Migration):
    dependencies = [
        ("collector", "0005_comparison_without_constraints"),
    ]

    operations = [
        migrations.RunSQL((HISTORY / "vote_v2.sql").read_text(), f"DROP FUNCTION IF EXISTS {V2}"),
        migrations.RunSQL(f"DROP FUNCTION IF EXISTS {V1}", (HISTORY / "vote_v1.sql").read_text()),
    ]
