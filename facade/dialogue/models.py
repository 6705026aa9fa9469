"""Audience-bound sessions and the messages in them."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class SessionStatus(models.TextChoices):
    OPEN = "open"
    CLOSED = "closed"
    EXPIRED = "expired"


class DialogueSession(models.Model):
    """The audience and principal are fixed when the session opens and never recomputed."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")
    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.PROTECT, related_name="sessions")
    audience = models.CharField(max_length=16, choices=[("owner", "owner"), ("customer", "customer"), ("peer", "peer")])
    principal_type = models.CharField(max_length=16)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, related_name="+")
    customer = models.ForeignKey("tenancy.Customer", on_delete=models.PROTECT, null=True, related_name="+")
    peer = models.ForeignKey("tenancy.PeerCredential", on_delete=models.PROTECT, null=True, related_name="+")
    status = models.CharField(max_length=16, choices=SessionStatus.choices, default=SessionStatus.OPEN)
    # An owner trying the customer face: a customer session in every way, with the owner as its
    # principal, and left out of every metric and review input (no misses, hits, ratings or
    # trust changes are written for it; its requests are marked and not counted).
    preview = models.BooleanField(default=False)
    # Scripted traffic `rsi_simulate` played (rsi/simulate.py): counted in the metrics and the
    # review like any customer's — watching that is its point — but marked as simulated wherever
    # an owner sees it, and its requests never wait for the owner (no count, no e-mail).
    simulated = models.BooleanField(default=False)
    # The agent's contract version the session's latest turn spoke by (approvals.AgentContract;
    # the one it was opened under until then).  A publish that changes only what a conversation
    # is told moves it at the next turn; one that takes away what it relies on ends the session
    # (`closed_reason` "contract_republished") and a new one `continues` it (issue 26 §2).
    contract_version = models.PositiveIntegerField(null=True, blank=True)
    closed_reason = models.CharField(max_length=32, blank=True, default="")
    # The session this one goes on from, ended by a publish: its messages are this one's history
    # too, and its requests were moved here (services.session_continue).
    continues = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="continuation"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_activity_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # A publish closes the agent's open customer sessions on another contract version: this
        # finds them without reading the agent's closed sessions, which only accumulate
        # (bench/approvals.py: 100 open among 300,000 closed took a 125 ms scan without it).
        # Not on `last_activity_at`, so a turn's touch of its session stays a HOT update.
        # The daily review reads one agent's local day (rsi/review_input.py): without
        # `session_agent_created` every figure scanned all the agent's sessions (bench/review.py).
        indexes = [
            models.Index(
                fields=["agent", "contract_version"],
                name="session_open_customer",
                condition=models.Q(status="open", audience="customer"),
            ),
            models.Index(fields=["agent", "created_at"], name="session_agent_created"),
        ]
        constraints = [
            models.CheckConstraint(
                name="session_one_principal",
                condition=(
                    models.Q(principal_type="user", user__isnull=False, customer__isnull=True, peer__isnull=True)
                    | models.Q(principal_type="customer", user__isnull=True, customer__isnull=False, peer__isnull=True)
                    | models.Q(principal_type="peer", user__isnull=True, customer__isnull=True, peer__isnull=False)
                ),
            )
        ]

    def __str__(self) -> str:
        return f"{self.audience} session {self.pk} ({self.status})"

    @property
    def principal_id(self) -> str:
        return str(self.user_id or self.customer_id or self.peer_id)


class Message(models.Model):
    """A message in a session.  Raw text stays here; the ledger records ids and sizes only."""

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(DialogueSession, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=[("principal", "principal"), ("agent", "agent"), ("owner", "owner")])
    text = models.TextField()
    client_message_id = models.CharField(max_length=64, blank=True, default="")
    # Agent replies: the principal message answered, what was cited and why the run stopped.
    reply_to = models.OneToOneField("self", on_delete=models.CASCADE, null=True, blank=True, related_name="reply")
    citations = models.JSONField(default=list, blank=True)
    stop_reason = models.CharField(max_length=32, blank=True, default="")
    # Owner-face replies: what the page shows beside the text, e.g. {"cards": [proposal card, …]}
    # (approvals.selectors.proposal_card) — never a token or a code.
    metadata = models.JSONField(default=dict, blank=True)
    # An owner's reply to a request (role "owner"): the request it answers.
    request = models.ForeignKey(
        "CustomerRequest", on_delete=models.CASCADE, null=True, blank=True, related_name="owner_replies"
    )
    # A customer's or peer's reply: the outgoing check's rule-set hash (guard.outgoing.RULESET_HASH)
    # it passed, so the nightly re-check (guard/recheck.py) reads again only what an older rule set
    # passed, and sets it to the rule set that read it last.  Empty for every other message.
    ruleset_hash = models.CharField(max_length=64, blank=True, default="", db_default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # The nightly re-check reads an agent's replies of one local day (guard/recheck.py).
        indexes = [
            models.Index(fields=["created_at"], name="message_reply_created", condition=models.Q(role="agent")),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "client_message_id"],
                condition=~models.Q(client_message_id=""),
                name="message_idempotent_client_id",
            )
        ]

    def __str__(self) -> str:
        # Sizes only: a message's text is the customer's own words (see the module docstring).
        return f"{self.role} message {self.pk} in session {self.session_id} ({len(self.text)} chars)"


class RunStatus(models.TextChoices):
    PLANNING = "planning"
    EXECUTING = "executing"
    WAITING_INPUT = "waiting_input"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    OVER_BUDGET = "over_budget"


class Run(models.Model):
    """One turn of the agent: the answer to one principal message.  The three counters are kept
    apart on purpose: rounds of planning, model calls (repairs included), executed tools."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")
    session = models.ForeignKey(DialogueSession, on_delete=models.CASCADE, related_name="runs")
    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="run")
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.PLANNING)
    stop_reason = models.CharField(max_length=32, blank=True, default="")
    needs_input = models.BooleanField(default=False)
    step_index = models.PositiveSmallIntegerField(default=0)
    llm_call_count = models.PositiveSmallIntegerField(default=0)
    tool_call_count = models.PositiveSmallIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    provider = models.CharField(max_length=32, blank=True, default="")
    context_hash = models.CharField(max_length=64, blank=True, default="")
    # The agent's contract version the run spoke by (None for the owner face, which speaks by no
    # customer contract): recorded in its `run.finished` event, so an auditor's replay of the
    # agent at that moment can be checked against it across a publish mid-conversation.
    contract_version = models.PositiveIntegerField(null=True, blank=True)
    guard_category = models.CharField(max_length=16, blank=True, default="")
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # A run whose turn broke off without a reply (a dropped database connection, a process that
    # died) is run again when its message is re-sent: `attempts` counts the tries and
    # `attempted_at` is when the latest one began (None: the first, at `started_at`).  Database
    # defaults, so turn_sql.START need not name them.
    attempts = models.PositiveSmallIntegerField(default=1, db_default=1)
    attempted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "started_at"], name="run_tenant_started"),
            # The sweep of stranded runs (runtime/stranded.py) reads only the unanswered ones.
            models.Index(fields=["started_at"], name="run_unanswered", condition=models.Q(finished_at__isnull=True)),
        ]

    def __str__(self) -> str:
        stopped = f": {self.stop_reason}" if self.stop_reason else ""
        return f"run {self.pk} ({self.status}{stopped})"


class Span(models.Model):
    """A trace span of a model or tool call: timings, sizes and outcomes, never message text."""

    id = models.BigAutoField(primary_key=True)
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="spans")
    kind = models.CharField(max_length=8, choices=[("model", "model"), ("tool", "tool")])
    name = models.CharField(max_length=64)
    outcome = models.CharField(max_length=32)
    started_at = models.DateTimeField()
    duration_ms = models.FloatField()
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.kind} span {self.name} of run {self.run_id}: {self.outcome}"


class DailyUsage(models.Model):
    """Model calls a tenant made on one UTC day, counted with a conditional UPDATE so that
    concurrent runs can't overshoot the budget."""

    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    model_calls = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "day"], name="daily_usage_tenant_day")]

    def __str__(self) -> str:
        return f"tenant {self.tenant_id} on {self.day}: {self.model_calls} model calls"


class CustomerRequest(models.Model):
    """Something a customer (or peer) asked to have done; it follows the agent's request flow."""

    id = models.BigAutoField(primary_key=True)
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")
    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.PROTECT, related_name="requests")
    session = models.ForeignKey(DialogueSession, on_delete=models.PROTECT, related_name="requests")
    run = models.ForeignKey("Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="requests")
    kind = models.CharField(max_length=16, choices=[("request", "request"), ("handoff", "handoff")], default="request")
    state = models.CharField(max_length=32)
    summary = models.CharField(max_length=300)
    details = models.JSONField(default=dict, blank=True)
    flow = models.JSONField()  # the flow the request was created under
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        # Not the summary: it is the customer's wording.
        return f"{self.kind} #{self.pk} ({self.state})"

    @property
    def next_actor(self) -> str:
        return str(self.flow["states"][self.state]["next_actor"])


class Rating(models.Model):
    """A customer's rating of a conversation, one per session (a review input)."""

    session = models.OneToOneField(DialogueSession, on_delete=models.CASCADE, related_name="rating")
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")
    stars = models.PositiveSmallIntegerField()
    comment = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.CheckConstraint(name="rating_stars_1_5", condition=models.Q(stars__gte=1, stars__lte=5))]

    def __str__(self) -> str:
        return f"{self.stars} stars for session {self.session_id}"


class TrustChange(models.Model):
    """Each change of a customer's trust score and why (a review input)."""

    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")
    customer = models.ForeignKey("tenancy.Customer", on_delete=models.CASCADE, related_name="trust_changes")
    delta = models.SmallIntegerField()
    reason = models.CharField(max_length=32)
    score = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # The daily review counts a tenant's trust changes of one day (rsi/review_input.py).
        indexes = [models.Index(fields=["tenant", "created_at"], name="trust_tenant_created")]

    def __str__(self) -> str:
        return f"customer {self.customer_id} trust {self.delta:+d} ({self.reason}) to {self.score}"
