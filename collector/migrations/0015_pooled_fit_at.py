from django.db import migrations, models


def fitted_already(apps, schema_editor):
    """Studies finished before this migration had their pooled fit stored by their last close."""
    Study = apps.get_model("collector", "Study")
    Study.objects.filter(status="finished").update(pooled_fit_at=models.F("finished_at"))


class Migration(migrations.Migration):

    dependencies = [
        ('collector', '0014_evaluation_upload_in_the_background'),
    ]

    operations = [
        migrations.AddField(
            model_name='study',
            name='pooled_fit_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(fitted_already, migrations.RunPython.noop),
    ]
