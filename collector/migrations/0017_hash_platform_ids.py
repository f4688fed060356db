# Platform ids are never stored raw: a keyed hash (collector.voting.participant_ids) stands in
# for every id already stored. Simulated voters' names are not platform ids and stay. Going back
# keeps the hashes (an id cannot be recovered from its hash).

from django.db import migrations, models

BATCH = 5000


def hash_stored_ids(apps, schema_editor):
    from collector.voting.participant_ids import participant_key

    Voter = apps.get_model("collector", "Voter")
    rows = (
        Voter.objects.exclude(participant="")
        .exclude(source="simulated")
        .order_by("id")
        .values_list("id", "participant")
    )
    batch = []
    for pk, participant in rows.iterator(chunk_size=BATCH):
        batch.append(Voter(id=pk, participant=participant_key(participant)))
        if len(batch) >= BATCH:
            Voter.objects.bulk_update(batch, ["participant"])
            batch = []
    if batch:
        Voter.objects.bulk_update(batch, ["participant"])


class Migration(migrations.Migration):

    dependencies = [
        ('collector', '0016_design_default_from_registry'),
    ]

    operations = [
        migrations.AddField(
            model_name='voter',
            name='declined_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='voter',
            name='forgotten_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name='voter',
            name='participant',
            field=models.CharField(blank=True, help_text='Keyed hash of the platform id (never the id).', max_length=200),
        ),
        migrations.RunPython(hash_stored_ids, migrations.RunPython.noop, elidable=False),
    ]
