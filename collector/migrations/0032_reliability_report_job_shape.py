# A reliability report's row takes the shape of every background job's row (BackgroundJob):
# requested_at becomes sent_at, computed_at becomes finished_at, and it gains heartbeat_at.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("collector", "0031_background_job_shape"),
    ]

    operations = [
        migrations.RenameField("studyreliability", "requested_at", "sent_at"),
        migrations.RenameField("studyreliability", "computed_at", "finished_at"),
        migrations.AlterField(
            model_name="studyreliability",
            name="sent_at",
            field=models.DateTimeField(
                blank=True, help_text="When its job's message was last sent to the queue.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="studyreliability",
            name="heartbeat_at",
            field=models.DateTimeField(
                blank=True, help_text="Last sign of life of the job running it.", null=True
            ),
        ),
        migrations.AlterField(
            model_name="studyreliability",
            name="error",
            field=models.TextField(blank=True, help_text="Why the job failed."),
        ),
    ]
