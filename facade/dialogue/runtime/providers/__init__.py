"""Model providers: `provider_for(agent)` picks the configured one (FACADE_LLM_PROVIDER)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from django.conf import settings

from facade.tenancy.models import AgentProfile

from .base import ModelReply, Provider, ProviderError, ToolCall, ToolSpec

if TYPE_CHECKING:
    from approvals.contract import ContractTerms


def provider_for(agent: AgentProfile, terms: ContractTerms | None = None) -> Provider:
    """`terms`: a contract other than the live one, for the offline model, which reads it directly
    (a remote model reads it in the prompt).  Only the proposal replay passes it."""
    kind = settings.FACADE_LLM_PROVIDER
    if kind == "offline":
        from .offline import OfflineProvider

        return OfflineProvider(agent, terms)
    if kind == "openai":
        return _shared_openai()
    raise ValueError(f"FACADE_LLM_PROVIDER={kind!r}: use offline or openai")


@functools.lru_cache(maxsize=1)
def _shared_openai() -> Provider:
    """One client per process, so its connection pool is reused (it is thread-safe)."""
    from .openai import OpenAICompatibleProvider

    return OpenAICompatibleProvider.from_settings()


__all__ = ["ModelReply", "Provider", "ProviderError", "ToolCall", "ToolSpec", "provider_for"]
