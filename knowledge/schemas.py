"""Typed inputs and outputs of the knowledge app."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from .models import SourceType

# Source types only the server assigns: a customer candidate is drawn from conversations and
# reviewed as such (it never counts as the owner's word), so no caller may claim it for material.
SERVER_ONLY_SOURCE_TYPES = frozenset({SourceType.CUSTOMER})


class SourceIn(BaseModel):
    """Where material comes from.  Without a type, a reference and a version it never takes effect."""

    model_config = ConfigDict(frozen=True)

    type: SourceType
    ref: str = Field(min_length=1, max_length=300)
    version: str = Field(min_length=1, max_length=128)

    @field_validator("ref", "version")
    @classmethod
    def not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()


class RestoreIn(BaseModel):
    """Which version to restore: a positive whole number, never 1.5 or `true` read as 1."""

    model_config = ConfigDict(frozen=True)

    version: StrictInt = Field(ge=1, le=2**31 - 1)


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One search hit (a plain dataclass: it is built for every result of every search)."""

    entry_id: int
    version: int
    version_id: int
    title: str
    snippet: str
    status: str
    source: dict[str, str]


class VersionOut(BaseModel):
    entry_id: int
    version: int
    status: str
    title: str
    reasons: list[str]
    confidence: Decimal
    regulated: bool
    valid_until: dt.datetime | None = None
