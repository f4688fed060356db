"""A study's team: each member's role (owner, editor, viewer). Every existing study's creator
becomes its owner; a study without a creator (made on the command line) has no owner until one
is added (``manage.py study_member``)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def creators_become_owners(apps, schema_editor):
    Study = apps.get_model("collector", "Study")
    StudyMember = apps.get_model("collector", "StudyMember")
    StudyMember.objects.bulk_create(
        StudyMember(study_id=study_id, user_id=user_id, role="owner")
        for study_id, user_id in Study.objects.filter(created_by__isnull=False).values_list(
            "id", "created_by_id"
        )
    )


class Migration(migrations.Migration):
    dependencies = [
        ("collector", "0018_withdrawn_votes_and_sent_messages"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="StudyMember",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("role", models.CharField(choices=[("owner", "Owner"), ("editor", "Editor"), ("viewer", "Viewer")], max_length=8)),
                ("added_at", models.DateTimeField(auto_now_add=True)),
                ("study", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="members", to="collector.study")),
                ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="study_roles", to=settings.AUTH_USER_MODEL)),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("study", "user"), name="one_role_per_study_and_user")],
            },
        ),  # fmt: skip
        migrations.RunPython(creators_become_owners, migrations.RunPython.noop),
    ]
