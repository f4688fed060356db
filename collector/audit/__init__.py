"""The audit trail of staff actions (:mod:`collector.audit.trail`) and the SQL that keeps it
append-only (``sql/audit_append_only.sql``)."""
