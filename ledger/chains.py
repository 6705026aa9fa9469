"""Which chains there are and who may read one: the one thing the ledger asks of the project.

The ledger stores events in chains numbered by `chain_id` and depends on nothing else in the
project.  What a chain stands for, what it is called and who may read it over the API belong to
the project, which answers through a `ChainDirectory` named by the setting
``FACADE_LEDGER_CHAINS`` (a dotted path to the class, loaded with `import_string`).  Facade's
chains are its tenants: ``"facade.tenancy.ledger_chains.TenantChains"``.

`manage.py ledger_verify`, the nightly verification task and the ledger API (verify, checkpoints,
export) are its only callers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string


@dataclass(frozen=True)
class NamedChain:
    id: int
    # How people name the chain: written into every checkpoint (`label`) and every verification
    # report, and what `ledger_verify --tenant` and the API's `?tenant=` take.  Stable over time.
    label: str


class ChainRefused(Exception):
    """`readable` found no chain for this caller: the API answers `http_status` with `code` and
    `detail` as its error."""

    def __init__(self, code: str, detail: str, http_status: int = 400) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.http_status = http_status


class ChainDirectory(ABC):
    """The contract a project implements so that the ledger can list and guard its chains.

    Three methods, all reads:

    * `chains()` - every chain that should be verified, in a stable order;
    * `chain(label)` - the chain with that label, or None;
    * `readable(user=..., label=...)` - the chain an API caller may read.  `label` is the one the
      caller named (None when it named none).  Refuse with `ChainRefused` (or any error the
      project's API handler knows, which passes through untouched).  A chain the caller may not
      read must be refused exactly like one that does not exist, so that the answer tells nobody
      which chains exist.
    """

    @abstractmethod
    def chains(self) -> Sequence[NamedChain]: ...

    @abstractmethod
    def chain(self, label: str) -> NamedChain | None: ...

    @abstractmethod
    def readable(self, *, user: Any, label: str | None) -> NamedChain: ...


def chain_directory() -> ChainDirectory:
    """The project's directory, built afresh per call (cheap; nothing cached across settings)."""
    path = getattr(settings, "FACADE_LEDGER_CHAINS", "")
    if not path:
        raise ImproperlyConfigured("FACADE_LEDGER_CHAINS must name the project's ChainDirectory class")
    directory = import_string(path)
    if not (isinstance(directory, type) and issubclass(directory, ChainDirectory)):
        raise ImproperlyConfigured(f"FACADE_LEDGER_CHAINS={path!r} is not a ledger.chains.ChainDirectory")
    return directory()
