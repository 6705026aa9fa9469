"""The console's pages of one tenant, in the order its navigation lists them."""

from __future__ import annotations

from typing import Any

from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext_lazy as _

from facade.tenancy.models import Tenant

PAGES: list[tuple[str, Any]] = [
    ("audit-timeline", _("Timeline")),
    ("audit-lineage", _("Lineage")),
    ("audit-replay", _("Replay")),
    ("audit-verification", _("Verification")),
    ("audit-export", _("Export")),
    ("audit-metrics", _("Metrics")),
]


def audit_nav(tenant: Tenant, current: str) -> list[dict[str, Any]]:
    links = []
    for name, label in PAGES:
        try:
            url = reverse(name, args=[tenant.slug])
        except NoReverseMatch:  # a page not merged yet
            continue
        links.append({"url": url, "label": label, "current": name == current})
    return links
