"""The voting rules' function, version 3 (collector/voting/sql/history/vote_v3.sql): attention
checks, excluded voters, paused studies, the address bound on leases, and a lease renewed only
once it has expired; and collector_exclude_voter (exclude_voter.sql), the one implementation of
excluding a voter. Version 2 is dropped."""

from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parent.parent / "voting" / "sql"
HISTORY = SQL / "history"  # superseded versions, kept for the migrations that installed them
V2 = "collector_vote_v2(text, bigint, text, bigint, varchar, integer, timestamptz, boolean)"
V3 = (
    "collector_vote_v3(text, bigint, text, bigint, varchar, integer, timestamptz, boolean,"
    " integer, double precision)"
)
EXCLUDE = "collector_exclude_voter(bigint, text, timestamptz)"


class Migration(migrations.Migration):
    dependencies = [
        ("collector", "0008_crowd_quality_and_study_management"),
    ]

    operations = [
        migrations.RunSQL(
            (SQL / "exclude_voter.sql").read_text(), f"DROP FUNCTION IF EXISTS {EXCLUDE}"
        ),
        migrations.RunSQL((HISTORY / "vote_v3.sql").read_text(), f"DROP FUNCTION IF EXISTS {V3}"),
        migrations.RunSQL(f"DROP FUNCTION IF EXISTS {V2}", (HISTORY / "vote_v2.sql").read_text()),
    ]
