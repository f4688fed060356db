-- Excluding a voter, in one place: staff (collector.voting.store.exclude_voter) and the
-- attention-check rule (collector_vote_v3) both call this function.
--
-- The voter gets no more comparisons (the voting function refuses them from now on) and their
-- lease goes back to the pool. Their votes in the study's open ballot are voided: moved to
-- collector_voidedvote, and those comparisons open again for other voters, so the ballot still
-- reaches M answered comparisons per item. Their votes in closed (or closing) ballots stay: the
-- later ballots were generated from them; readers leave them out of pooled estimates by the
-- voter's excluded_at.
--
-- The open ballot's row is locked before its comparisons reopen: a close that races with this
-- (the last vote's open -> closing) waits, then sees the reopened comparisons and leaves the
-- ballot open (collector.studies.lifecycle.note_vote_recorded).
--
-- Returns the number of votes voided, or -1 when the voter does not exist or was excluded
-- before (nothing changes then).

CREATE OR REPLACE FUNCTION collector_exclude_voter(
    p_voter bigint, p_reason text, p_now timestamptz
) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
    v_study bigint; v_ballot bigint; v_voided integer := 0;
BEGIN
    UPDATE collector_voter SET excluded_at = p_now, excluded_reason = left(p_reason, 200)
    WHERE id = p_voter AND excluded_at IS NULL
    RETURNING study_id INTO v_study;
    IF NOT FOUND THEN
        RETURN -1;
    END IF;
    SELECT b.id INTO v_ballot FROM collector_ballot b
    WHERE b.study_id = v_study AND b.status = 'open'
    FOR NO KEY UPDATE;
    UPDATE collector_comparison SET leased_to_id = NULL, lease_expires_at = NULL
    WHERE leased_to_id = p_voter AND status = 'open';
    IF v_ballot IS NOT NULL THEN
        WITH gone AS (
            DELETE FROM collector_vote v WHERE v.voter_id = p_voter AND v.ballot_id = v_ballot
            RETURNING v.comparison_id, v.ballot_id, v.voter_id, v.choice, v.response_ms,
                      v.created_at
        ), kept AS (
            INSERT INTO collector_voidedvote (comparison_id, ballot_id, voter_id, choice,
                                              response_ms, created_at, voided_at)
            SELECT comparison_id, ballot_id, voter_id, choice, response_ms, created_at, p_now
            FROM gone
            RETURNING comparison_id
        )
        UPDATE collector_comparison c
        SET status = 'open', leased_to_id = NULL, lease_expires_at = NULL
        FROM kept WHERE c.id = kept.comparison_id;
        GET DIAGNOSTICS v_voided = ROW_COUNT;
    END IF;
    RETURN v_voided;
END
$fn$;
