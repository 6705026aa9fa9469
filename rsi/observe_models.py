"""Observe's state (issue 13): an agent's feed subscriptions, one digest per (agent, local day)
and the candidate items in it.  Candidates are never effective: the owner may turn one into a
pending knowledge proposal (rsi/observe.py)."""

from __future__ import annotations

from django.db import models

__all__ = ["FeedSubscription", "FeedStatus", "Digest", "DigestItem"]

URL_MAX = 2000


class FeedStatus(models.TextChoices):
    NEVER = "never", "never fetched"
    OK = "ok", "fetched"
    NOT_MODIFIED = "not_modified", "not modified (304)"
    FAILED = "failed", "failed"


class FeedSubscription(models.Model):
    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.CASCADE, related_name="feed_subscriptions")
    url = models.URLField(max_length=URL_MAX)
    keywords = models.JSONField(default=list, blank=True)
    enabled = models.BooleanField(default=True)
    last_status = models.CharField(max_length=16, choices=FeedStatus.choices, default=FeedStatus.NEVER)
    last_error = models.CharField(max_length=32, blank=True, default="")  # a FetchFailed code or "malformed"
    last_http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    last_fetched_at = models.DateTimeField(null=True, blank=True)
    etag = models.CharField(max_length=200, blank=True, default="")
    last_modified = models.CharField(max_length=100, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "url"], name="rsi_feed_agent_url_unique")]
        ordering = ["pk"]

    def __str__(self) -> str:
        return self.url


class Digest(models.Model):
    """One per agent and local day: running observe again that day updates it in place."""

    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.CASCADE, related_name="digests")
    day = models.DateField()
    runs = models.PositiveIntegerField(default=0)
    feeds_ok = models.PositiveIntegerField(default=0)  # of the latest run (304 counts as ok)
    feeds_failed = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "day"], name="rsi_digest_agent_day_unique")]

    def __str__(self) -> str:
        return f"digest {self.day.isoformat()}"


class DigestItem(models.Model):
    """A candidate from a feed: untrusted text, shown to the owner only, escaped."""

    digest = models.ForeignKey(Digest, on_delete=models.CASCADE, related_name="items")
    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.CASCADE, related_name="+")
    subscription = models.ForeignKey(FeedSubscription, on_delete=models.SET_NULL, null=True, related_name="items")
    feed_url = models.URLField(max_length=URL_MAX)
    key = models.CharField(max_length=64)  # observe_rules.item_key: de-duplicates across the agent's digests
    guid = models.CharField(max_length=500, blank=True, default="")
    link = models.CharField(max_length=URL_MAX, blank=True, default="")
    title = models.CharField(max_length=300)
    summary = models.TextField(blank=True, default="")
    published = models.DateTimeField(null=True, blank=True)
    score = models.PositiveIntegerField(default=0)
    matched = models.JSONField(default=list, blank=True)
    proposal_id = models.CharField(max_length=64, blank=True, default="")  # the knowledge proposal made from it
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "key"], name="rsi_digest_item_agent_key_unique")]
        ordering = ["-score", "-published", "pk"]

    def __str__(self) -> str:
        return self.title
