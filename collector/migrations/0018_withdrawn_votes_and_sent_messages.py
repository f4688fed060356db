from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('collector', '0017_hash_platform_ids'),
    ]

    operations = [
        migrations.AddField(
            model_name='evaluation',
            name='sent_at',
            field=models.DateTimeField(blank=True, help_text="When its job's message was last sent to the queue.", null=True),
        ),
        migrations.AddField(
            model_name='study',
            name='identities_removed_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='study',
            name='withdrawn_votes',
            field=models.PositiveIntegerField(default=0),
        ),
    ]
