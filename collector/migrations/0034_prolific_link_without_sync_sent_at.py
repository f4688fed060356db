# ProlificLink.sync_sent_at was never read nor written: the reconciliation runs in the Prolific
# job (and by hand), which its own stamps resend.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("collector", "0033_vote_function_v5"),
    ]

    operations = [
        migrations.RemoveField(model_name="prolificlink", name="sync_sent_at"),
    ]
