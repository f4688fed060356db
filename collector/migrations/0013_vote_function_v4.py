"""The voting rules' function, version 4 (collector/voting/sql/history/vote_v4.sql): the rules
of version 3 with the columns Python reads (no ``is_check`` and ``address_full``) and a study
paused by ``paused_at`` alone. Archiving sets ``paused_at`` since this version; a study archived
before gets it here, so it stays paused. Version 3 (as migration 0009 installed it) is dropped,
and put back by the reverse migration."""

from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parent.parent / "voting" / "sql"
HISTORY = SQL / "history"  # superseded versions, kept for the migrations that installed them
V3 = (
    "collector_vote_v3(text, bigint, text, bigint, varchar, integer, timestamptz, boolean,"
    " integer, double precision)"
)
V4 = (
    "collector_vote_v4(text, bigint, text, bigint, varchar, integer, timestamptz, boolean,"
    " integer, double precision)"
)
ARCHIVED_ARE_PAUSED = (
    "UPDATE collector_study SET paused_at = archived_at"
    " WHERE archived_at IS NOT NULL AND paused_at IS NULL"
)


class Migration(migrations.Migration):
    dependencies = [
        ("collector", "0012_target_studies"),
    ]

    operations = [
        migrations.RunSQL(ARCHIVED_ARE_PAUSED, migrations.RunSQL.noop),
        migrations.RunSQL((HISTORY / "vote_v4.sql").read_text(), f"DROP FUNCTION IF EXISTS {V4}"),
        migrations.RunSQL(f"DROP FUNCTION IF EXISTS {V3}", (HISTORY / "vote_v3.sql").read_text()),
    ]
