"""A study, its areas, tokens and items, its ballots, voters, comparisons, votes and scores."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q

from collector.models import (
    DEFAULT_QUESTION,
    new_completion_code,
    new_pseudonym,
    new_voter_token,
)
from ranking.designs import default_design


def shipped_language(code: str) -> None:
    """A voter-page language must be one of ``settings.LANGUAGES`` (read when validated, so a
    language added to the setting needs no migration)."""
    if code not in dict(settings.LANGUAGES):
        shipped = ", ".join(dict(settings.LANGUAGES))
        raise ValidationError(f"{code!r} is not a language of the voter pages ({shipped})")


def _code(help_text: str = "") -> models.CharField:
    """A code voters type into their platform: random unless staff set one."""
    return models.CharField(max_length=32, default=new_completion_code, help_text=help_text)


class Study(models.Model):
    class Estimator(models.TextChoices):
        RESCALED_BORDA = "rescaled_borda", "Rescaled Borda (the paper's method)"
        BRADLEY_TERRY = "bradley_terry", "Pooled Bradley-Terry"

    class Status(models.TextChoices):
        SETUP = "setup", "Set up (ballot 1 not opened yet)"
        RUNNING = "running", "Running"
        FINISHED = "finished", "Finished"

    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=200)
    question = models.CharField(max_length=300, default=DEFAULT_QUESTION)
    instructions = models.TextField(blank=True, help_text="Shown before voting; blank = default.")
    n_ballots = models.PositiveSmallIntegerField()
    alpha = models.FloatField()
    m = models.PositiveIntegerField(help_text="Comparisons per item in each ballot (M).")
    # A design registered in ranking.designs (which owns the names; the RANKING_DESIGNS setting
    # lists them, the first the default) and its options.
    design = models.CharField(max_length=16, default=default_design)
    design_options = models.JSONField(default=dict, blank=True)
    # A target study: items are (target, candidate) pairs, an area per target (its first token
    # the target), and each target's candidates are ranked on their own.
    targets = models.BooleanField(default=False)
    estimator = models.CharField(
        max_length=16, choices=Estimator.choices, default=Estimator.RESCALED_BORDA
    )
    seed = models.BigIntegerField(default=0)
    allow_ties = models.BooleanField(default=True)
    per_voter_cap = models.PositiveIntegerField(
        default=100, help_text="Most comparisons one voter may answer in one ballot."
    )
    lease_seconds = models.PositiveIntegerField(
        default=300, help_text="How long a handed-out comparison stays reserved for its voter."
    )
    auto_open = models.BooleanField(
        default=False, help_text="Open each next ballot as soon as it is generated."
    )
    completion_code = _code()
    redirect_url = models.URLField(blank=True, help_text="e.g. the Prolific completion link.")
    licence = models.CharField(
        max_length=200, blank=True, help_text="The dataset's licence (e.g. CC BY 4.0), in its card."
    )
    contact = models.TextField(
        blank=True,
        help_text="Who to contact, and the ethics approval, as the consent page should say it.",
    )
    # The voter pages' language (their own texts; what staff write is shown as written).
    language = models.CharField(max_length=8, default="en", validators=[shipped_language])
    browser_language = models.BooleanField(
        default=False, help_text="Show the voter pages in the browser's language when shipped."
    )
    # Codes for the ways out other than completing the quota (see docs/running-a-study.md).
    no_consent_code = _code("For voters who do not consent.")
    partial_code = _code("For voters left waiting with no pair for them (partial completion).")
    excluded_code = _code("For excluded voters, so they can be rejected on the platform.")
    stranded_minutes = models.PositiveIntegerField(
        default=10,
        help_text="Minutes a voter waits with no pair before being offered the partial code "
        "(0: never).",
    )
    auto_redirect = models.BooleanField(
        default=False, help_text="Send voters to the redirect URL at once when they are done."
    )
    paused_at = models.DateTimeField(
        null=True, blank=True, help_text="While set, no new comparison is handed out."
    )
    archived_at = models.DateTimeField(null=True, blank=True)
    # Attention checks: one comparison in ``check_every`` is a check (0: none).
    check_every = models.PositiveIntegerField(
        default=0, help_text="Show an attention check once in this many comparisons (0: never)."
    )
    check_fail_limit = models.PositiveIntegerField(
        default=2, help_text="Failed attention checks that flag a voter."
    )
    check_exclude = models.BooleanField(
        default=False, help_text="Exclude a voter at once when they reach the failure limit."
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.SETUP)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When the pooled Bradley-Terry fit of the finished study was stored (its items'
    # pooled_strength...): it follows the finishing close in a task of its own; null = pending.
    pooled_fit_at = models.DateTimeField(null=True, blank=True)
    # When the pooled fit's job was last sent (by the finishing close, or again by beat's sweep).
    pooled_fit_sent_at = models.DateTimeField(null=True, blank=True)
    # The probability every item of a top k needs for staff to call that top settled.
    settled_threshold = models.FloatField(
        default=0.95,
        validators=[MinValueValidator(0.5), MaxValueValidator(1.0)],
        help_text="A top k is settled when every item in it is in the true top k with at least "
        "this probability (0.5 to 1).",
    )
    # Votes of closed ballots deleted at their voters' request since the scores were computed
    # (collector.participants.forgetting); 0 again once rescored without them.
    withdrawn_votes = models.PositiveIntegerField(default=0)
    # The set of counted votes the study holds now: bumped by every change of it (an exclusion,
    # a deletion at a participant's request, a rescore: collector.studies.vote_sets). Every
    # figure derived from the votes stores the vote set it was computed from.
    vote_set = models.PositiveIntegerField(default=0)
    # The vote set the stored pooled fit was computed from.
    pooled_fit_vote_set = models.PositiveIntegerField(default=0)
    # When the recomputing of the study's stale figures was last sent (beat's sweep resends it).
    recompute_sent_at = models.DateTimeField(null=True, blank=True)
    # When DATA_RETENTION_DAYS removed the voters' platform ids, addresses and platform data.
    identities_removed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "studies"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(alpha__gt=0) & Q(alpha__lt=1), name="study_alpha_in_unit_interval"
            ),
            models.CheckConstraint(condition=Q(n_ballots__gte=1), name="study_n_ballots_positive"),
            models.CheckConstraint(condition=Q(m__gte=1), name="study_m_positive"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def language_name(self) -> str:
        """The voter pages' language by its own name (``settings.LANGUAGES``; the code if it is
        no longer there)."""
        return dict(settings.LANGUAGES).get(self.language, self.language)


class Area(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="areas")
    name = models.CharField(max_length=200)
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["study", "position"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="area_unique_name"),
            models.UniqueConstraint(fields=["study", "position"], name="area_unique_position"),
        ]

    def __str__(self) -> str:
        return self.name


class Token(models.Model):
    area = models.ForeignKey(Area, on_delete=models.CASCADE, related_name="tokens")
    text = models.CharField(max_length=200)

    class Meta:
        ordering = ["area", "id"]
        constraints = [
            models.UniqueConstraint(fields=["area", "text"], name="token_unique_in_area"),
        ]

    def __str__(self) -> str:
        return self.text


class Item(models.Model):
    """A pair of tokens of one area: the thing being ranked."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    index = models.PositiveIntegerField(help_text="Position in the study's item order (0-based).")
    area = models.ForeignKey(Area, on_delete=models.CASCADE, related_name="items")
    token_a = models.ForeignKey(Token, on_delete=models.CASCADE, related_name="+")
    token_b = models.ForeignKey(Token, on_delete=models.CASCADE, related_name="+")
    # A target study's candidate kind: positive, distractor, random, or blank.
    kind = models.CharField(max_length=12, blank=True, default="")
    # Filled when the study finishes (rank_in_target: a target study's rank within its target).
    final_rank = models.PositiveIntegerField(null=True, blank=True)
    final_score = models.FloatField(null=True, blank=True)
    rank_in_target = models.PositiveIntegerField(null=True, blank=True)
    # The pooled Bradley-Terry fit of every trusted vote, stored when the study finishes (and
    # again after an exclusion): the log-strength, and a 95% interval for the top items.
    pooled_strength = models.FloatField(null=True, blank=True)
    pooled_low = models.FloatField(null=True, blank=True)
    pooled_high = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["study", "index"]
        constraints = [
            models.UniqueConstraint(fields=["study", "index"], name="item_unique_index"),
            models.UniqueConstraint(
                fields=["study", "token_a", "token_b"], name="item_unique_pair"
            ),
            models.CheckConstraint(condition=~Q(token_a=F("token_b")), name="item_two_tokens"),
        ]

    def __str__(self) -> str:
        return f"{self.token_a} – {self.token_b}"


class Ballot(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        OPEN = "open", "Open"
        CLOSING = "closing", "Closing"
        CLOSED = "closed", "Closed"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="ballots")
    number = models.PositiveSmallIntegerField(help_text="k, from 1.")
    m = models.PositiveIntegerField(help_text="Comparisons per item in this ballot.")
    n_items = models.PositiveIntegerField()
    n_comparisons = models.PositiveIntegerField(
        default=0, help_text="Comparisons generated for this ballot (Eq. 3's term M*N(k)/2)."
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    opened_at = models.DateTimeField(null=True, blank=True)
    closing_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "number"]
        constraints = [
            models.UniqueConstraint(fields=["study", "number"], name="ballot_unique_number"),
            # At most one ballot of a study is open or closing at a time.
            models.UniqueConstraint(
                fields=["study"],
                condition=Q(status__in=["open", "closing"]),
                name="ballot_one_active_per_study",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.study} · ballot {self.number}"


class ItemScore(models.Model):
    """An item's membership of a ballot, and its scores once the ballot is closed."""

    ballot = models.ForeignKey(Ballot, on_delete=models.CASCADE, related_name="scores")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="scores")
    wins = models.PositiveIntegerField(null=True, blank=True)
    ties = models.PositiveIntegerField(null=True, blank=True)
    appearances = models.PositiveIntegerField(null=True, blank=True)
    x = models.FloatField(null=True, blank=True, help_text="Borda score (Eq. 1).")
    y = models.FloatField(null=True, blank=True, help_text="Rescaled score (Eq. 6).")
    ybar = models.FloatField(null=True, blank=True, help_text="Running mean (Eq. 5).")
    strength = models.FloatField(null=True, blank=True, help_text="Pooled Bradley-Terry.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["ballot", "item"], name="itemscore_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.item} in ballot {self.ballot_id}"


class Voter(models.Model):
    """One person answering comparisons of one study.

    ``participant`` is the keyed hash of the crowd platform's id
    (:func:`collector.voting.participant_ids.participant_key`), never the id itself: the same
    participant coming back finds their voter, and staff find it from the id they are given.
    Exports and pages only ever show ``pseudonym``. Deleting a participant's data
    (:mod:`collector.participants.forgetting`) blanks every identifier and sets ``forgotten_at``.
    """

    class Source(models.TextChoices):
        ANONYMOUS = "anonymous", "Anonymous"
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "Amazon Mechanical Turk"
        PARTICIPANT = "participant", "Generic participant id"
        SIMULATED = "simulated", "Simulated crowd"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="voters")
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.ANONYMOUS)
    participant = models.CharField(
        max_length=200, blank=True, help_text="Keyed hash of the platform id (never the id)."
    )
    platform_data = models.JSONField(default=dict, blank=True)
    pseudonym = models.CharField(max_length=32, unique=True, default=new_pseudonym)
    token = models.CharField(max_length=64, unique=True, default=new_voter_token)
    consented_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # A keyed hash of the address the voter registered from (never the address itself): how many
    # comparisons one address may hold at once (collector.voting.store).
    address = models.CharField(max_length=32, blank=True)
    # Since when the voter has been waiting with no pair (the partial code after a while).
    waiting_since = models.DateTimeField(null=True, blank=True)
    partial_at = models.DateTimeField(null=True, blank=True, help_text="Given the partial code.")
    excluded_at = models.DateTimeField(null=True, blank=True)
    excluded_reason = models.CharField(max_length=200, blank=True)
    checks_passed = models.PositiveIntegerField(default=0)
    checks_failed = models.PositiveIntegerField(default=0)
    # A platform participant who declined on the consent page (and has not agreed since): they
    # get the no-consent code whenever they come back.
    declined_at = models.DateTimeField(null=True, blank=True)
    # Their data was deleted at their request: no identifier, no votes left; only the outcome
    # they had earned (collector.voting.exits.Outcome, "" for none), so they get its code.
    forgotten_at = models.DateTimeField(null=True, blank=True)
    forgotten_outcome = models.CharField(max_length=16, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "source", "participant"],
                condition=~Q(participant=""),
                name="voter_unique_participant",
            ),
        ]
        indexes = [
            models.Index(
                fields=["study", "address"], condition=~Q(address=""), name="voter_address"
            ),
        ]

    def __str__(self) -> str:
        return self.pseudonym


class ForgottenParticipant(models.Model):
    """What a study keeps of a platform participant whose data was deleted at their request
    (:mod:`collector.participants.forgetting`): the keyed hash of their platform id, so that they
    are recognised when they come back, and the outcome they had earned
    (:class:`collector.voting.exits.Outcome`, "" for none), so that they get its code. Nothing
    links it to their emptied voter row; it goes with the study's other identifiers
    (:mod:`collector.participants.retention`)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    source = models.CharField(max_length=16, choices=Voter.Source.choices)
    participant = models.CharField(max_length=200, help_text="Keyed hash of the platform id.")
    outcome = models.CharField(max_length=16, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "source", "participant"], name="forgotten_unique_participant"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source} participant whose data was deleted"


class Comparison(models.Model):
    """Two items of a ballot shown together; left/right placement is fixed at generation."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        ANSWERED = "answered", "Answered"
        VOID = "void", "Void (ballot closed before it was answered)"

    # No database constraint on the ballot and the two items, and no index on the items: a
    # ballot of a million comparisons would run three million foreign-key checks at commit and
    # maintain two more random-order indexes when it is stored, for nothing. Comparisons are
    # written only by the ballot generator, from the study's own ids, and delete_study removes
    # them by ballot before the ballots and items.
    ballot = models.ForeignKey(
        Ballot, on_delete=models.CASCADE, related_name="comparisons", db_constraint=False
    )
    item_left = models.ForeignKey(
        Item, on_delete=models.DO_NOTHING, related_name="+", db_index=False, db_constraint=False
    )
    item_right = models.ForeignKey(
        Item, on_delete=models.DO_NOTHING, related_name="+", db_index=False, db_constraint=False
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    # No index of its own: comparison_outstanding finds open leases, and the plain index would
    # cost two more index entries per vote (a claim and an answer each write a new row version).
    leased_to = models.ForeignKey(
        Voter, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_index=False
    )
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # Position in the ballot (0, 1, ...). Claims walk the slots through the claimable index, which
    # alone is sorted by them: ordered by id, the planner could walk the primary key instead, past
    # every answered comparison of the ballot (milliseconds per vote late in a big ballot).
    slot = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~Q(item_left=F("item_right")), name="comparison_two_items"
            ),
        ]
        indexes = [
            # The claim query and the open-left probe walk only unanswered comparisons.
            models.Index(
                fields=["ballot", "slot"], condition=Q(status="open"), name="comparison_claimable"
            ),
            models.Index(
                fields=["leased_to"], condition=Q(status="open"), name="comparison_outstanding"
            ),
        ]

    def __str__(self) -> str:
        return f"comparison {self.pk}: item {self.item_left_id} vs item {self.item_right_id}"


class Vote(models.Model):
    class Choice(models.TextChoices):
        LEFT = "left", "Left"
        RIGHT = "right", "Right"
        TIE = "tie", "Can't decide"

    comparison = models.OneToOneField(Comparison, on_delete=models.CASCADE, related_name="vote")
    # Always the comparison's ballot (the vote statement copies it). No database constraint: its
    # check at commit would lock the ballot row in every vote's transaction, one row shared by all
    # voters (a multixact per vote and a queue on its page).
    ballot = models.ForeignKey(
        Ballot, on_delete=models.CASCADE, related_name="votes", db_constraint=False
    )
    # Indexed by vote_per_voter_ballot (voter first).
    voter = models.ForeignKey(Voter, on_delete=models.PROTECT, related_name="votes", db_index=False)
    choice = models.CharField(max_length=5, choices=Choice.choices)
    response_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # The comparison's two item ids, smaller first (copied by the vote statement): a claim skips
    # the pairs its voter has answered with one probe of vote_voter_pair, not one comparison
    # lookup per earlier vote of the voter.
    pair_low = models.BigIntegerField()
    pair_high = models.BigIntegerField()

    class Meta:
        indexes = [
            models.Index(fields=["voter", "ballot"], name="vote_per_voter_ballot"),
            models.Index(fields=["voter", "pair_low", "pair_high"], name="vote_voter_pair"),
        ]

    def __str__(self) -> str:
        return f"vote on comparison {self.comparison_id}: {self.choice}"


class VoidedVote(models.Model):
    """A vote taken back when its voter was excluded while its ballot was open: its comparison
    went back to the pool for another voter. Kept for the record; never scored or exported."""

    comparison_id = models.BigIntegerField()
    ballot = models.ForeignKey(Ballot, on_delete=models.CASCADE, related_name="+")
    voter = models.ForeignKey(Voter, on_delete=models.CASCADE, related_name="voided_votes")
    choice = models.CharField(max_length=5, choices=Vote.Choice.choices)
    response_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField()
    voided_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"voided vote on comparison {self.comparison_id}"
