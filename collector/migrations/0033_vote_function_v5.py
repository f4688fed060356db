"""The voting rules' function, version 5 (collector/voting/sql/vote_v5.sql): the rules of
version 4, with the spreads (where a voter starts claiming comparisons, where their attention
checks fall, which side holds a check's related pair) taken from the md5 of the voter's
participant id (or pseudonym) instead of their database id, so a seeded simulated study gets the
same votes whatever ran before. Version 4 (as migration 0013 installed it) is dropped, and put
back by the reverse migration."""

from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parent.parent / "voting" / "sql"
HISTORY = SQL / "history"  # superseded versions, kept for the migrations that installed them
V4 = (
    "collector_vote_v4(text, bigint, text, bigint, varchar, integer, timestamptz, boolean,"
    " integer, double precision)"
)
V5 = (
    "collector_vote_v5(text, bigint, text, bigint, varchar, integer, timestamptz, boolean,"
    " integer, double precision)"
)


class Migration(migrations.Migration):
    dependencies = [
        ("collector", "0032_reliability_report_job_shape"),
    ]

    operations = [
        migrations.RunSQL((SQL / "vote_v5.sql").read_text(), f"DROP FUNCTION IF EXISTS {V5}"),
        migrations.RunSQL(f"DROP FUNCTION IF EXISTS {V4}", (HISTORY / "vote_v4.sql").read_text()),
    ]
