-- The voting rules, in one place: collector_vote_v4 stores a vote or an attention check's answer
-- (or says exactly why not) and hands the voter their next comparison or check, in one round trip.
-- Created by migration 0013_vote_function_v4, which drops collector_vote_v3; Python reads its
-- columns by name and maps the outcome to a response (collector/voting/store.py). Against v3 as
-- migration 0009 installed it (history/vote_v3.sql): no is_check and address_full columns, and
-- a study counts as paused by paused_at alone (archiving sets it). A change of this function is
-- a new file, a new name and a new migration: this file is what 0013 installs, byte for byte.
-- It keeps no state on the server connection between calls, so it runs unchanged behind
-- PgBouncer in transaction pooling. collector_exclude_voter (exclude_voter.sql) is the one
-- implementation of excluding a voter; this function calls it when a voter fails too many checks.
--
-- Arguments:
--   p_token / p_voter_id  the voter, by API token (then p_slug must be their study's slug) or by id
--   p_cid, p_choice, p_ms the vote; p_cid NULL: no vote, only the next comparison. p_cid may be
--                         an attention check shown to this voter (its id comes from the
--                         comparisons' sequence, so the two never collide)
--   p_now                 the request's time (leases, the vote's created_at)
--   p_next                hand out the next comparison (false: check and vote only)
--   p_addr_limit, p_addr_share
--                         voters who registered from one address hold at most
--                         LEAST(p_addr_limit, GREATEST(1, ceil(p_addr_share * ballot size)))
--                         unexpired leases at once (p_addr_limit 0: no bound)
--
-- outcome:
--   ok                    the vote was stored (or no vote was sent); a next comparison may follow
--   repeat                the identical vote was stored before; the voter's outstanding comparison
--   unknown_voter         no voter with this token or id
--   wrong_study           the token belongs to a voter of another study than p_slug
--   excluded              staff (or the attention-check rule) excluded this voter
--   no_comparison         no comparison with this id in the voter's study (nor a check of theirs)
--   answered_differently  this voter answered the comparison before, with another choice
--   answered_by_other     another voter answered the comparison
--   tie_not_allowed       a tie, in a study that does not allow ties
--   voided                the comparison was withdrawn when its ballot closed early
--   ballot_closed         the comparison's ballot is no longer open
--   not_leased            the comparison is not leased to this voter (never was, or reclaimed)
--   quota_reached         the voter answered their quota of this ballot already
-- Every outcome but ok and repeat changes nothing.
--
-- What is handed out next, in this order: the voter's unanswered attention check; their
-- outstanding comparison (a refresh; the lease is renewed only once it has expired, so holding
-- a comparison costs a wait, not a request); a new attention check when one is due; a newly
-- claimed comparison. Nothing while the study is paused or archived, to an excluded voter, past
-- the quota, or past the address bound.
--
-- Attention checks (Study.check_every = R >= 2): the voter's shown items (votes in the study plus
-- checks) run in blocks of R; block b holds one check, at position 1 + hash(voter, b) mod (R - 1)
-- of the block, so never the first item. Checks never touch a comparison, a vote or a score.
--
-- open_left counts the ballot's open comparisons after a stored vote, exactly up to 65: the
-- engine's tail threshold plus one (collector.studies.lifecycle.TAIL_LOCK_THRESHOLD, 64; a test
-- holds the two equal). The limit is a constant, not an argument: with a LIMIT parameter,
-- PostgreSQL's plan cache keeps re-planning that statement on every call.

CREATE OR REPLACE FUNCTION collector_vote_v4(
    p_token text, p_voter_id bigint, p_slug text,
    p_cid bigint, p_choice varchar, p_ms integer, p_now timestamptz, p_next boolean,
    p_addr_limit integer, p_addr_share double precision,
    OUT outcome text,
    -- the voter's context (the current ballot: the open one, else the latest one opened)
    OUT out_voter bigint, OUT out_study bigint, OUT out_cap integer, OUT out_finished boolean,
    OUT out_code varchar, OUT out_ballot bigint, OUT out_ballot_open boolean,
    OUT out_ballot_size integer, OUT out_answered bigint,
    -- the vote (stored now, or the identical one stored before) and the open-comparison probe
    OUT vote_id bigint, OUT vote_ballot bigint, OUT vote_ms integer, OUT vote_created timestamptz,
    OUT open_left bigint,
    -- the voter excluded, the study paused (archiving pauses it too)
    OUT out_excluded boolean, OUT out_paused boolean,
    -- the next comparison, with its items and tokens
    OUT pair_id bigint,
    OUT l_item bigint, OUT l_index integer, OUT l_a bigint, OUT l_a_text text,
    OUT l_b bigint, OUT l_b_text text,
    OUT r_item bigint, OUT r_index integer, OUT r_a bigint, OUT r_a_text text,
    OUT r_b bigint, OUT r_b_text text
) LANGUAGE plpgsql AS $fn$
DECLARE
    v_slug text; v_lease integer; v_ties boolean; v_addr text; v_every integer;
    v_fail_limit integer; v_check_exclude boolean; v_excluded_code varchar;
    k_choice varchar; k_related_left boolean; k_ms integer; k_created timestamptz;
    v_n_votes bigint; v_n_checks bigint; v_total bigint; v_block bigint; v_pos bigint;
    v_check bigint; v_check_def bigint; v_related bigint; v_unrelated bigint;
    v_held bigint; v_failed integer; v_passed boolean;
    c_ballot bigint; c_status varchar; c_leased bigint; c_study bigint; c_ballot_status varchar;
    c_vote bigint; c_voter bigint; c_choice varchar; c_ms integer; c_created timestamptz;
    c_left bigint; c_right bigint;
    v_has_lease boolean := p_cid IS NULL;
    v_expires timestamptz; v_start bigint; v_cid bigint; v_left bigint; v_right bigint;
BEGIN
    IF p_token IS NOT NULL THEN
        SELECT vr.id INTO p_voter_id FROM collector_voter vr WHERE vr.token = p_token;
    END IF;
    -- The voter's row lock serialises one voter's concurrent requests (double clicks, two tabs):
    -- "one lease per voter" and the cap stay exact. NO KEY: foreign-key checks of rows that
    -- reference the voter (KEY SHARE) do not wait for it.
    SELECT vr.id, s.id, s.slug, s.per_voter_cap, s.lease_seconds, s.allow_ties,
           s.status = 'finished', s.completion_code, b.id, b.status = 'open', b.n_comparisons,
           (SELECT COUNT(*) FROM collector_vote v WHERE v.voter_id = vr.id AND v.ballot_id = b.id),
           vr.excluded_at IS NOT NULL, s.paused_at IS NOT NULL,
           vr.address, s.check_every, s.check_fail_limit, s.check_exclude, s.excluded_code
    INTO out_voter, out_study, v_slug, out_cap, v_lease, v_ties,
         out_finished, out_code, out_ballot, out_ballot_open, out_ballot_size, out_answered,
         out_excluded, out_paused, v_addr, v_every, v_fail_limit, v_check_exclude,
         v_excluded_code
    FROM collector_voter vr
    JOIN collector_study s ON s.id = vr.study_id
    LEFT JOIN collector_ballot b ON b.id = (
        SELECT b2.id FROM collector_ballot b2
        WHERE b2.study_id = s.id AND b2.status <> 'pending' ORDER BY b2.number DESC LIMIT 1)
    WHERE vr.id = p_voter_id
    FOR NO KEY UPDATE OF vr;
    IF NOT FOUND THEN
        outcome := 'unknown_voter';
        RETURN;
    END IF;
    IF p_slug IS NOT NULL AND v_slug <> p_slug THEN
        outcome := 'wrong_study';
        RETURN;
    END IF;
    IF out_excluded THEN
        out_code := v_excluded_code;
        IF p_cid IS NOT NULL THEN
            outcome := 'excluded';
        END IF;
        RETURN;
    END IF;

    IF p_cid IS NOT NULL THEN
        SELECT c.ballot_id, c.status, c.leased_to_id, b.study_id, b.status,
               v.id, v.voter_id, v.choice, v.response_ms, v.created_at,
               c.item_left_id, c.item_right_id
        INTO c_ballot, c_status, c_leased, c_study, c_ballot_status,
             c_vote, c_voter, c_choice, c_ms, c_created, c_left, c_right
        FROM collector_comparison c
        JOIN collector_ballot b ON b.id = c.ballot_id
        LEFT JOIN collector_vote v ON v.comparison_id = c.id
        WHERE c.id = p_cid
        FOR NO KEY UPDATE OF c;
        IF NOT FOUND OR c_study <> out_study THEN
            -- An attention check shown to this voter?
            SELECT k.choice, k.related_left, k.response_ms, k.answered_at
            INTO k_choice, k_related_left, k_ms, k_created
            FROM collector_checkanswer k WHERE k.id = p_cid AND k.voter_id = out_voter
            FOR NO KEY UPDATE;
            IF NOT FOUND THEN
                outcome := 'no_comparison';
                RETURN;
            END IF;
            IF k_choice <> '' THEN
                IF k_choice <> p_choice THEN
                    outcome := 'answered_differently';
                    RETURN;
                END IF;
                outcome := 'repeat';
                vote_id := p_cid; vote_ballot := out_ballot; vote_ms := k_ms;
                vote_created := k_created;
            ELSIF p_choice = 'tie' AND NOT v_ties THEN
                outcome := 'tie_not_allowed';
                RETURN;
            ELSE
                -- Passed: the related pair chosen. A tie between an obviously related and an
                -- obviously unrelated pair is a failure.
                UPDATE collector_checkanswer
                SET choice = p_choice, response_ms = p_ms, answered_at = p_now,
                    passed = (p_choice = CASE WHEN related_left THEN 'left' ELSE 'right' END)
                WHERE id = p_cid
                RETURNING passed INTO v_passed;
                IF v_passed THEN
                    UPDATE collector_voter SET checks_passed = checks_passed + 1
                    WHERE id = out_voter;
                ELSE
                    UPDATE collector_voter SET checks_failed = checks_failed + 1
                    WHERE id = out_voter RETURNING checks_failed INTO v_failed;
                    IF v_check_exclude AND v_fail_limit > 0 AND v_failed >= v_fail_limit THEN
                        PERFORM collector_exclude_voter(
                            out_voter, format('failed %s attention checks', v_failed), p_now);
                        out_excluded := true;
                        out_code := v_excluded_code;
                    END IF;
                END IF;
                vote_id := p_cid; vote_ballot := out_ballot; vote_ms := p_ms;
                vote_created := p_now;
            END IF;
            v_has_lease := true;  -- then as a refresh: the voter's outstanding comparison, if any
        ELSIF c_vote IS NOT NULL THEN
            IF c_voter <> out_voter THEN
                outcome := 'answered_by_other';
                RETURN;
            END IF;
            IF c_choice <> p_choice THEN
                outcome := 'answered_differently';
                RETURN;
            END IF;
            outcome := 'repeat';
            vote_id := c_vote; vote_ballot := c_ballot; vote_ms := c_ms; vote_created := c_created;
            v_has_lease := true;
        ELSIF p_choice = 'tie' AND NOT v_ties THEN
            outcome := 'tie_not_allowed';
            RETURN;
        ELSIF c_status = 'void' THEN
            outcome := 'voided';
            RETURN;
        ELSIF c_ballot_status <> 'open' OR c_status <> 'open' THEN
            outcome := 'ballot_closed';
            RETURN;
        ELSIF c_leased IS DISTINCT FROM out_voter THEN
            outcome := 'not_leased';
            RETURN;
        ELSIF out_answered >= LEAST(out_cap, out_ballot_size) THEN
            outcome := 'quota_reached';
            RETURN;
        ELSE
            INSERT INTO collector_vote (comparison_id, ballot_id, voter_id, choice, response_ms,
                                        created_at, pair_low, pair_high)
            VALUES (p_cid, c_ballot, out_voter, p_choice, p_ms, p_now,
                    LEAST(c_left, c_right), GREATEST(c_left, c_right))
            RETURNING id INTO vote_id;
            UPDATE collector_comparison SET status = 'answered' WHERE id = p_cid;
            vote_ballot := c_ballot; vote_ms := p_ms; vote_created := p_now;
            out_answered := out_answered + 1;
            -- The engine closes the ballot after its last vote: it needs the exact count of open
            -- comparisons near the end only. A walk of the claimable index, stopped at 65.
            SELECT COUNT(*) INTO open_left FROM (
                SELECT 1 FROM collector_comparison o
                WHERE o.ballot_id = c_ballot AND o.status = 'open'
                ORDER BY o.slot LIMIT 65) AS t;
        END IF;
    END IF;
    outcome := coalesce(outcome, 'ok');

    IF out_excluded OR NOT p_next OR out_ballot IS NULL OR NOT out_ballot_open THEN
        RETURN;
    END IF;
    v_expires := p_now + make_interval(secs => v_lease);
    -- 1. The voter's unanswered attention check comes back first.
    IF v_every >= 2 THEN
        SELECT k.id, k.attention_check_id, k.related_left INTO v_check, v_check_def, k_related_left
        FROM collector_checkanswer k
        WHERE k.voter_id = out_voter AND k.choice = ''
        ORDER BY k.id LIMIT 1;
    END IF;
    -- 2. A refresh returns the outstanding comparison: no shopping for easy pairs. Its lease is
    -- renewed only once expired (and nobody claimed it meanwhile), so holding one is not free.
    IF v_check IS NULL AND v_has_lease THEN
        UPDATE collector_comparison
        SET lease_expires_at = CASE WHEN lease_expires_at < p_now THEN v_expires
                                    ELSE lease_expires_at END
        WHERE id = (SELECT min(id) FROM collector_comparison
                    WHERE leased_to_id = out_voter AND ballot_id = out_ballot AND status = 'open')
        RETURNING id, item_left_id, item_right_id INTO v_cid, v_left, v_right;
    END IF;
    IF v_check IS NULL AND v_cid IS NULL AND (out_paused OR out_answered >= out_cap) THEN
        RETURN;
    END IF;
    -- 3. A new attention check, when one is due (see the header).
    IF v_check IS NULL AND v_cid IS NULL AND v_every >= 2 THEN
        SELECT count(*) INTO v_n_votes FROM collector_vote v WHERE v.voter_id = out_voter;
        SELECT count(*) INTO v_n_checks FROM collector_checkanswer k WHERE k.voter_id = out_voter;
        v_total := v_n_votes + v_n_checks;
        v_block := v_total / v_every;
        v_pos := 1 + ((out_voter::numeric * 2246822519 + v_block::numeric * 3266489917)
                      % (v_every - 1))::bigint;
        IF v_n_checks <= v_block AND v_total % v_every >= v_pos THEN
            -- The check this voter has seen least, then the oldest.
            SELECT c.id INTO v_check_def
            FROM collector_attentioncheck c
            WHERE c.study_id = out_study
            ORDER BY (SELECT count(*) FROM collector_checkanswer k
                      WHERE k.voter_id = out_voter AND k.attention_check_id = c.id), c.id
            LIMIT 1;
            IF v_check_def IS NOT NULL THEN
                k_related_left := (out_voter + v_n_checks) % 2 = 0;
                INSERT INTO collector_checkanswer (id, voter_id, attention_check_id, ballot_id,
                                                   related_left, choice, shown_at)
                VALUES (nextval(pg_get_serial_sequence('collector_comparison', 'id')),
                        out_voter, v_check_def, out_ballot, k_related_left, '', p_now)
                RETURNING id INTO v_check;
            END IF;
        END IF;
    END IF;
    IF v_check IS NOT NULL THEN
        -- A check looks like any comparison: its pairs carry item ids from the items' sequence.
        SELECT c.related_item_id, c.related_a, c.related_b,
               c.unrelated_item_id, c.unrelated_a, c.unrelated_b
        INTO v_related, l_a_text, l_b_text, v_unrelated, r_a_text, r_b_text
        FROM collector_attentioncheck c WHERE c.id = v_check_def;
        pair_id := v_check;
        l_index := -1; r_index := -1; l_a := 0; l_b := 0; r_a := 0; r_b := 0;
        IF k_related_left THEN
            l_item := v_related; r_item := v_unrelated;
        ELSE
            l_item := v_unrelated; r_item := v_related;
            SELECT r_a_text, r_b_text, l_a_text, l_b_text
            INTO l_a_text, l_b_text, r_a_text, r_b_text;
        END IF;
        RETURN;
    END IF;
    -- 4. Else claim a new comparison.
    IF v_cid IS NULL AND out_answered < out_cap AND p_addr_limit > 0 AND v_addr <> '' THEN
        -- The address bound: unexpired leases held by the other voters from this address.
        SELECT count(*) INTO v_held
        FROM collector_voter o JOIN collector_comparison c ON c.leased_to_id = o.id
        WHERE o.study_id = out_study AND o.address = v_addr AND o.address <> ''
          AND o.id <> out_voter AND c.status = 'open' AND c.lease_expires_at > p_now;
        IF v_held >= LEAST(p_addr_limit,
                           GREATEST(1, ceil(p_addr_share * out_ballot_size)::integer)) THEN
            RETURN;  -- the voter waits, as when every comparison is taken
        END IF;
    END IF;
    IF v_cid IS NULL AND out_answered < out_cap THEN
        v_start := ((out_voter::numeric * 2654435761 + out_answered::numeric * 2246822519)
                    % greatest(1, out_ballot_size))::bigint;
        UPDATE collector_comparison SET leased_to_id = out_voter, lease_expires_at = v_expires
        WHERE id = coalesce(
            (SELECT c.id FROM collector_comparison c
             WHERE c.ballot_id = out_ballot AND c.status = 'open' AND c.slot >= v_start
               AND (c.leased_to_id IS NULL OR c.lease_expires_at < p_now)
               AND NOT EXISTS (
                   SELECT 1 FROM collector_vote v
                   WHERE v.voter_id = out_voter
                     AND v.pair_low = LEAST(c.item_left_id, c.item_right_id)
                     AND v.pair_high = GREATEST(c.item_left_id, c.item_right_id))
             ORDER BY c.slot LIMIT 1 FOR UPDATE SKIP LOCKED),
            (SELECT c.id FROM collector_comparison c
             WHERE c.ballot_id = out_ballot AND c.status = 'open' AND c.slot < v_start
               AND (c.leased_to_id IS NULL OR c.lease_expires_at < p_now)
               AND NOT EXISTS (
                   SELECT 1 FROM collector_vote v
                   WHERE v.voter_id = out_voter
                     AND v.pair_low = LEAST(c.item_left_id, c.item_right_id)
                     AND v.pair_high = GREATEST(c.item_left_id, c.item_right_id))
             ORDER BY c.slot LIMIT 1 FOR UPDATE SKIP LOCKED))
          AND status = 'open' AND (leased_to_id IS NULL OR lease_expires_at < p_now)
        RETURNING id, item_left_id, item_right_id INTO v_cid, v_left, v_right;
    END IF;
    IF v_cid IS NULL THEN
        RETURN;
    END IF;
    pair_id := v_cid;
    SELECT il.id, il."index", tla.id, tla.text, tlb.id, tlb.text,
           ir.id, ir."index", tra.id, tra.text, trb.id, trb.text
    INTO l_item, l_index, l_a, l_a_text, l_b, l_b_text,
         r_item, r_index, r_a, r_a_text, r_b, r_b_text
    FROM collector_item il
    JOIN collector_token tla ON tla.id = il.token_a_id
    JOIN collector_token tlb ON tlb.id = il.token_b_id
    CROSS JOIN collector_item ir
    JOIN collector_token tra ON tra.id = ir.token_a_id
    JOIN collector_token trb ON trb.id = ir.token_b_id
    WHERE il.id = v_left AND ir.id = v_right;
END
$fn$;
