# A new study's design defaults to the registry's default (the first of RANKING_DESIGNS).

import ranking.designs
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("collector", "0014_evaluation_upload_in_the_background"),
    ]

    operations = [
        migrations.AlterField(
            model_name="study",
            name="design",
            field=models.CharField(default=ranking.designs.default_design, max_length=16),
        ),
    ]
