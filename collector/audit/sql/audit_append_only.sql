-- The audit trail is appended to only: any UPDATE or DELETE of a row is refused, whoever runs
-- it (the application, the admin, a psql session). Installed with its trigger by migration
-- 0021_audit_trail.
CREATE OR REPLACE FUNCTION collector_audit_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit trail is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
