"""Sourced, versioned knowledge entries and lessons of an agent.

An entry is a subject (a fact, an FAQ, a policy, or a lesson); every edit is a new
`EntryVersion`.  `KnowledgeEntry.current_version` is the version that takes effect: the latest
approved one that is not rolled back or quarantined.  Versions never change content; only their
status moves.
"""

from __future__ import annotations

from django.db import models


class Kind(models.TextChoices):
    FACT = "fact"
    FAQ = "faq"
    POLICY = "policy"
    PREFERENCE = "preference"  # lessons: preferences, wording and taboos
    WORDING = "wording"
    TABOO = "taboo"


# The kinds that are lessons: never approved by the L1 rule alone (rules.EntryFacts.lesson); each
# takes effect when the owner decides its L1 `lesson` proposal.
LESSON_KINDS = frozenset({Kind.PREFERENCE, Kind.WORDING, Kind.TABOO})


class Status(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    ROLLED_BACK = "rolled_back"
    QUARANTINED = "quarantined"


class SourceType(models.TextChoices):
    OWNER_DIALOGUE = "owner_dialogue"
    UPLOAD = "upload"
    URL = "url"
    REVIEW = "review"
    OBSERVE = "observe"
    CUSTOMER = "customer_candidate"


class KnowledgeEntry(models.Model):
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")
    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.PROTECT, related_name="knowledge_entries")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    subject = models.CharField(max_length=200, help_text="normalised title terms, to spot contradictions")
    origin_key = models.CharField(
        max_length=300, blank=True, default="", help_text="document and anchor an ingest produced it from"
    )
    current_version = models.ForeignKey(
        "knowledge.EntryVersion", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    latest_number = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "knowledge entries"
        indexes = [models.Index(fields=["agent", "subject"], name="knowledge_entry_subject")]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "origin_key"], condition=~models.Q(origin_key=""), name="knowledge_entry_origin"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} entry {self.pk} of agent {self.agent_id} (latest v{self.latest_number})"


class EntryVersion(models.Model):
    entry = models.ForeignKey(KnowledgeEntry, on_delete=models.PROTECT, related_name="versions")
    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.PROTECT, related_name="+")
    number = models.PositiveIntegerField()
    title = models.CharField(max_length=300)
    body = models.TextField()
    source_type = models.CharField(max_length=24, choices=SourceType.choices)
    source_ref = models.CharField(max_length=300)
    source_version = models.CharField(max_length=128)
    confidence = models.DecimalField(max_digits=4, decimal_places=3)
    regulated = models.BooleanField(default=False)
    regulated_categories = models.JSONField(default=list)
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices)
    decision_reasons = models.JSONField(default=list, help_text="why L1 left it pending, or how it was decided")
    actor_type = models.CharField(max_length=16)
    actor_id = models.CharField(max_length=64)
    caused_by_seq = models.BigIntegerField(null=True, blank=True, help_text="ledger seq of the event that caused it")
    restored_from = models.ForeignKey("self", on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    questions = models.JSONField(
        default=list, blank=True, help_text="other ways customers ask what this answers; searched with the text"
    )
    taboo_phrase = models.CharField(
        max_length=150,
        blank=True,
        default="",
        help_text="a taboo's words the agent never says (its X in “Never say ‘X’”); empty for other kinds",
    )
    translations = models.JSONField(
        default=dict,
        blank=True,
        help_text="the same answer in the site's other language: {language: {title, body}} (issue 26 §4)",
    )
    search_text = models.TextField(help_text="search terms: words, and CJK character bigrams")
    served = models.BooleanField(default=False, help_text="the entry's current version: what customers may see")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["entry", "number"], name="knowledge_version_number")]
        indexes = [
            models.Index(fields=["agent", "status"], name="knowledge_version_status"),
            models.Index(fields=["agent", "source_type", "source_ref"], name="knowledge_version_source"),
        ]

    def __str__(self) -> str:
        return f"entry {self.entry_id} v{self.number} ({self.status})"


class RegulatedTerm(models.Model):
    """An owner's own term that makes material regulated for one agent."""

    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.CASCADE, related_name="regulated_terms")
    term = models.CharField(max_length=100)
    category = models.CharField(max_length=32)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "term"], name="knowledge_regulated_term")]

    def __str__(self) -> str:
        return f"{self.term} ({self.category})"


class KnowledgeHit(models.Model):
    """A knowledge version used in a reply (for the knowledge-hit rate)."""

    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.CASCADE, related_name="+")
    session_id = models.UUIDField(null=True, blank=True)
    version = models.ForeignKey(EntryVersion, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # The daily review counts an agent's hits of one day (rsi/review_input.py).
        indexes = [models.Index(fields=["agent", "created_at"], name="knowledge_hit_time")]

    def __str__(self) -> str:
        return f"hit on version {self.version_id} of agent {self.agent_id}"


class KnowledgeMiss(models.Model):
    """A question no approved knowledge answered; only a normalised topic key is kept.

    The owner answers a topic (a new entry) or attaches it to an entry as one of its questions;
    its misses are then marked resolved (kept, for the review's counts), and the topic leaves the
    Unanswered questions page."""

    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.CASCADE, related_name="+")
    session_id = models.UUIDField(null=True, blank=True)
    asker = models.CharField(
        max_length=64, blank=True, default="", help_text="the customer or peer who asked (id), to count distinct askers"
    )
    topic_key = models.CharField(max_length=200)
    label = models.CharField(
        max_length=200,
        blank=True,
        default="",
        help_text="the topic key's terms in the order the customer wrote them, personal data removed",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_version = models.ForeignKey(
        EntryVersion, on_delete=models.PROTECT, null=True, blank=True, related_name="+", help_text="what answers it now"
    )

    class Meta:
        indexes = [
            models.Index(fields=["agent", "created_at"], name="knowledge_miss_time"),
            models.Index(fields=["agent", "topic_key"], name="knowledge_miss_topic"),
        ]

    def __str__(self) -> str:
        # Not the topic key: it is made from a customer's question.
        return f"miss {self.pk} of agent {self.agent_id}"


class IngestJob(models.Model):
    """An upload being turned into knowledge by a Celery worker: the request checks and keeps the
    file, the worker extracts it (bounded in time and memory) and stores its sections in batches
    of a few dozen, one transaction each.  Live progress goes through the cache."""

    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.CASCADE, related_name="+")
    filename = models.CharField(max_length=200)
    media_type = models.CharField(max_length=100)
    sha256 = models.CharField(max_length=64)
    data = models.BinaryField(default=b"", help_text="the uploaded file, kept until the job is done")
    sections = models.JSONField(default=list, help_text="unused since uploads are extracted by the worker")
    doubtful = models.BooleanField(default=False)
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED)
    total = models.PositiveIntegerField(default=0)
    created = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    error_code = models.CharField(max_length=40, blank=True, default="")
    error_detail = models.CharField(max_length=300, blank=True, default="")
    requested_by = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # How many runs were started (a claim counts one) and, while one runs, until when its worker's
    # lease holds (renewed as it works; facade/leases.py): a lease run out is a worker that died.
    attempts = models.PositiveSmallIntegerField(default=0)
    lease_expires_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"ingest job {self.pk} ({self.state}, {self.created} new of {self.total})"
