from django.db import migrations, models

# Existing votes get their comparison's item pair in one pass.
FILL_PAIRS = """
UPDATE collector_vote SET
    pair_low = CASE WHEN c.item_left_id < c.item_right_id THEN c.item_left_id
                    ELSE c.item_right_id END,
    pair_high = CASE WHEN c.item_left_id < c.item_right_id THEN c.item_right_id
                     ELSE c.item_left_id END
FROM collector_comparison c
WHERE c.id = collector_vote.comparison_id
"""


class Migration(migrations.Migration):
    dependencies = [
        ("collector", "0002_hot_path"),
    ]

    operations = [
        migrations.AddField("vote", "pair_low", models.BigIntegerField(null=True)),
        migrations.AddField("vote", "pair_high", models.BigIntegerField(null=True)),
        migrations.RunSQL(FILL_PAIRS, migrations.RunSQL.noop),
        migrations.AlterField("vote", "pair_low", models.BigIntegerField()),
        migrations.AlterField("vote", "pair_high", models.BigIntegerField()),
        migrations.AddIndex(
            "vote",
            models.Index(fields=["voter", "pair_low", "pair_high"], name="vote_voter_pair"),
        ),
    ]
