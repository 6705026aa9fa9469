"""The Django admin's view of the ledger and the governance records, for platform operators
(`/admin/`, staff only): read-only for everyone, superusers included.  Every one of these rows is
written by a named service together with its ledger event; a row changed in the admin would have
no event, so the admin offers no add, change or delete, and no bulk actions.

Kept in one module (the console's app reads every other app) so that the read-only rule is
written once.  Secrets and hashes of secrets (a decision token's hash, an e-mailed code's hash,
a peer key's hash) are never shown; peer credentials are not listed at all.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from approvals.authority_models import DecisionChallenge, DecisionSignature, DecisionToken
from approvals.contract_models import AgentContract
from approvals.models import ChangeProposal, PreferenceSignal, ProposalReplay
from facade.tenancy.models import AgentProfile, Membership, Tenant
from knowledge.models import EntryVersion, KnowledgeEntry, RegulatedTerm
from ledger.catalogue import catalogue
from ledger.models import Chain, LedgerEvent
from rsi.governance_models import EscalationBudget
from rsi.review_models import ReviewAggregate, ReviewReport
from rsi.schedule_models import RsiRun


class ReadOnlyAdmin(admin.ModelAdmin):
    """Look, never touch: no add, change or delete permission whoever asks, and no actions (Django's
    `delete_selected` included).  A POST to a change page is refused by the admin itself (403)."""

    actions = None
    show_full_result_count = False  # a count of every row is a full scan on a long ledger
    list_per_page = 50

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


def _hex(value: Any) -> str:
    return bytes(value).hex() if value is not None else ""


class EventTypeFilter(admin.SimpleListFilter):
    """By event type, through the (chain, event_type, seq) index; the choices are the catalogue's."""

    title = "event type"
    parameter_name = "event_type"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(name, name) for name in sorted(catalogue.names())]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        return queryset.of_type(value) if value else queryset  # type: ignore[attr-defined]


class ChainFilter(admin.SimpleListFilter):
    """By chain, named by its tenant; the choices come from the chain heads (one row per tenant),
    not from a DISTINCT over every event."""

    title = "chain (tenant)"
    parameter_name = "chain_id"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        slugs = dict(Tenant.objects.values_list("pk", "slug"))
        chains = Chain.objects.order_by("chain_id").values_list("chain_id", flat=True)
        return [(str(chain), f"{chain} ({slugs.get(chain, '?')})") for chain in chains]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        return queryset.filter(chain_id=int(value)) if value and value.isdigit() else queryset


@admin.register(LedgerEvent)
class LedgerEventAdmin(ReadOnlyAdmin):
    list_display = ("chain_id", "seq", "event_type", "entity", "actor", "created_at", "hash_hex")
    list_filter = (ChainFilter, EventTypeFilter)
    # Newest first, read backwards along the (chain, seq) unique index.
    ordering = ("-chain_id", "-seq")
    fields = (
        "chain_id",
        "seq",
        "event_type",
        "entity",
        "actor",
        "created_at",
        "canonical",
        "prev_hash_hex",
        "hash_hex",
    )
    readonly_fields = fields

    @admin.display(description="event type")
    def event_type(self, event: LedgerEvent) -> str:
        return str(event.event_type)

    @admin.display(description="entity")
    def entity(self, event: LedgerEvent) -> str:
        return f"{event.entity_type} {event.entity_id}"

    @admin.display(description="actor")
    def actor(self, event: LedgerEvent) -> str:
        return f"{event.actor_type} {event.actor_id}"

    @admin.display(description="created at")
    def created_at(self, event: LedgerEvent) -> Any:
        return event.created_at

    @admin.display(description="previous hash")
    def prev_hash_hex(self, event: LedgerEvent) -> str:
        return _hex(event.prev_hash)

    @admin.display(description="hash")
    def hash_hex(self, event: LedgerEvent) -> str:
        return _hex(event.hash)


@admin.register(Chain)
class ChainAdmin(ReadOnlyAdmin):
    list_display = ("chain_id", "size", "head_hash_hex")
    fields = ("chain_id", "size", "head_hash_hex")
    readonly_fields = fields
    ordering = ("chain_id",)

    @admin.display(description="head hash")
    def head_hash_hex(self, chain: Chain) -> str:
        return _hex(chain.head_hash)


# --- approvals -------------------------------------------------------------------------------


@admin.register(ChangeProposal)
class ChangeProposalAdmin(ReadOnlyAdmin):
    list_display = ("id", "agent", "kind", "level", "origin", "status", "version", "decided_at", "created_at")
    list_filter = ("status", "level", "kind", "origin", "tenant")
    search_fields = ("id",)
    ordering = ("-created_at",)


@admin.register(DecisionToken)
class DecisionTokenAdmin(ReadOnlyAdmin):
    list_display = ("id", "agent", "owner", "change_id", "version", "decision", "assurance", "expires_at", "used_at")
    list_filter = ("decision", "assurance")
    exclude = ("token_hash",)  # the hash of a one-time token is a secret's stand-in
    ordering = ("-created_at",)


@admin.register(DecisionChallenge)
class DecisionChallengeAdmin(ReadOnlyAdmin):
    list_display = ("challenge_id", "agent", "owner", "change_id", "version", "decision", "status", "failures")
    list_filter = ("status", "decision")
    exclude = ("code_hash",)  # the hash of an e-mailed code is a secret's stand-in
    ordering = ("-created_at",)


@admin.register(DecisionSignature)
class DecisionSignatureAdmin(ReadOnlyAdmin):
    list_display = ("proposal", "version", "owner", "assurance", "created_at")
    list_filter = ("assurance",)
    ordering = ("-created_at",)


@admin.register(AgentContract)
class AgentContractAdmin(ReadOnlyAdmin):
    list_display = ("agent", "version", "is_live", "published_at", "published_by", "rolled_back_to")
    list_filter = ("is_live", "agent")
    ordering = ("agent", "-version")


@admin.register(PreferenceSignal)
class PreferenceSignalAdmin(ReadOnlyAdmin):
    list_display = ("proposal", "agent", "kind", "origin", "decision", "decided_at")
    list_filter = ("decision", "kind", "origin", "tenant")
    ordering = ("-decided_at",)


@admin.register(ProposalReplay)
class ProposalReplayAdmin(ReadOnlyAdmin):
    list_display = ("proposal", "proposal_version", "status", "days", "timed_out", "started_at", "computed_at")
    list_filter = ("status", "timed_out")
    ordering = ("-started_at",)


# --- rsi -------------------------------------------------------------------------------------


@admin.register(ReviewReport)
class ReviewReportAdmin(ReadOnlyAdmin):
    list_display = ("agent", "day", "status", "partial", "runs", "paused", "reviewer", "created_at", "finished_at")
    list_filter = ("status", "partial", "paused", "tenant")
    ordering = ("-day", "agent")


@admin.register(ReviewAggregate)
class ReviewAggregateAdmin(ReadOnlyAdmin):
    list_display = ("report", "key", "value", "label")
    ordering = ("-report", "key")


@admin.register(RsiRun)
class RsiRunAdmin(ReadOnlyAdmin):
    list_display = ("agent", "kind", "day", "status", "attempts", "partial", "queued_at", "finished_at")
    list_filter = ("kind", "status", "partial")
    ordering = ("-queued_at",)


@admin.register(EscalationBudget)
class EscalationBudgetAdmin(ReadOnlyAdmin):
    list_display = ("agent", "tokens", "refilled_at", "paused", "paused_at", "updated_at")
    list_filter = ("paused", "tenant")
    ordering = ("agent",)


# --- knowledge -------------------------------------------------------------------------------


@admin.register(KnowledgeEntry)
class KnowledgeEntryAdmin(ReadOnlyAdmin):
    list_display = ("id", "agent", "kind", "subject", "current_version", "latest_number", "created_at")
    list_filter = ("kind", "tenant")
    ordering = ("-created_at",)


@admin.register(EntryVersion)
class EntryVersionAdmin(ReadOnlyAdmin):
    list_display = ("entry", "number", "title", "status", "served", "source_type", "actor_type", "created_at")
    list_filter = ("status", "served", "source_type", "regulated")
    exclude = ("search_text",)  # derived search terms, not something a person reads
    ordering = ("-created_at",)


@admin.register(RegulatedTerm)
class RegulatedTermAdmin(ReadOnlyAdmin):
    list_display = ("agent", "term", "category")
    list_filter = ("category",)
    ordering = ("agent", "term")


# --- tenancy ---------------------------------------------------------------------------------


@admin.register(Tenant)
class TenantAdmin(ReadOnlyAdmin):
    list_display = (
        "slug",
        "name",
        "time_zone",
        "owners_require_totp",
        "l3_requires_totp",
        "l3_requires_two_owners",
        "auditors_read_raw_text",
        "created_at",
    )
    list_filter = ("auditors_read_raw_text", "owners_require_totp", "l3_requires_totp", "l3_requires_two_owners")
    search_fields = ("slug", "name")
    ordering = ("slug",)


@admin.register(Membership)
class MembershipAdmin(ReadOnlyAdmin):
    list_display = ("user", "tenant", "role", "created_at")
    list_filter = ("role", "tenant")
    ordering = ("tenant", "user")


@admin.register(AgentProfile)
class AgentProfileAdmin(ReadOnlyAdmin):
    list_display = ("slug", "name", "tenant", "max_steps", "created_at")
    list_filter = ("tenant",)
    search_fields = ("slug", "name")
    ordering = ("slug",)
