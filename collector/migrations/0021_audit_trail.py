"""The audit trail (one row per staff action on a study), append-only: the function in
collector/audit/sql/audit_append_only.sql refuses every UPDATE and DELETE of a row, through a
trigger. Rows keep the study's id and slug as plain values (no foreign key)."""

from pathlib import Path

from django.db import migrations, models

SQL = Path(__file__).resolve().parent.parent / "audit" / "sql"
TRIGGER = (
    "CREATE TRIGGER collector_audit_append_only BEFORE UPDATE OR DELETE ON collector_auditentry"
    " FOR EACH ROW EXECUTE FUNCTION collector_audit_append_only()"
)


class Migration(migrations.Migration):
    dependencies = [
        ("collector", "0020_study_members"),
    ]

    operations = [
        migrations.CreateModel(
            name="AuditEntry",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("at", models.DateTimeField(auto_now_add=True, db_index=True)),
                ("actor_id", models.BigIntegerField(blank=True, null=True)),
                ("actor", models.CharField(max_length=150)),
                ("address", models.GenericIPAddressField(blank=True, null=True)),
                ("action", models.CharField(max_length=40)),
                ("study_id", models.BigIntegerField(blank=True, null=True)),
                ("study_slug", models.CharField(blank=True, max_length=80)),
                ("detail", models.JSONField(blank=True, default=dict)),
            ],
            options={
                "verbose_name_plural": "audit entries",
                "ordering": ["-id"],
                "indexes": [models.Index(fields=["study_id", "-id"], name="audit_by_study")],
            },
        ),  # fmt: skip
        migrations.RunSQL(
            (SQL / "audit_append_only.sql").read_text(),
            "DROP FUNCTION IF EXISTS collector_audit_append_only()",
        ),
        migrations.RunSQL(
            TRIGGER, "DROP TRIGGER IF EXISTS collector_audit_append_only ON collector_auditentry"
        ),
    ]
