"""The voting rules as one SQL function (collector/voting/sql/history/vote_v1.sql), and each
ballot's comparison count, which the function reads."""

from pathlib import Path

from django.db import migrations, models

HISTORY = Path(__file__).resolve().parent.parent / "voting" / "sql" / "history"
VOTE_FUNCTION = HISTORY / "vote_v1.sql"
DROP_VOTE_FUNCTION = (
    "DROP FUNCTION IF EXISTS collector_vote_v1(text, bigint, text, bigint, varchar, integer,"
    " timestamptz, integer, boolean)"
)
FILL_COUNTS = """
UPDATE collector_ballot b SET n_comparisons = (
    SELECT COUNT(*) FROM collector_comparison c WHERE c.ballot_id = b.id)
"""


class Migration(migrations.Migration):
    dependencies = [
        ("collector", "0003_vote_pair"),
    ]

    operations = [
        migrations.AddField(
            model_name="ballot",
            name="n_comparisons",
            field=models.PositiveIntegerField(
                default=0, help_text="Comparisons generated for this ballot (Eq. 3's term M*N(k)/2)."
            ),
        ),
        migrations.RunSQL(FILL_COUNTS, migrations.RunSQL.noop),
        migrations.RunSQL(VOTE_FUNCTION.read_text(), DROP_VOTE_FUNCTION),
    ]
