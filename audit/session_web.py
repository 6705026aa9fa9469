"""`/audit/<tenant>/sessions/<id>`: one conversation as the auditor console shows it — pointers,
sizes, times, the run of each turn and the guard's blocks, and no text.  Customers' own words are
shown only when the tenant allows its auditors to read them and the reader is such an auditor
(`access.may_read_raw_text`; never an owner or an operator), on request (`?text=1`), and each
such read is recorded (`audit.raw_text_read`) before the text is sent."""

from __future__ import annotations

import uuid
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from facade.dialogue.selectors import audit_session_trail
from facade.tenancy.models import Tenant
from facade.tenancy.policy import NotFound

from .access import may_read_raw_text
from .links import timeline_url
from .services import raw_text_record
from .web import audit_page


@audit_page("session", tab="audit-timeline")
def audit_session(request: HttpRequest, tenant: Tenant, context: dict[str, Any], session_id: uuid.UUID) -> HttpResponse:
    may_read = may_read_raw_text(request.user, tenant)
    with_text = may_read and request.GET.get("text") == "1"
    try:
        trail = audit_session_trail(tenant_id=tenant.pk, session_id=session_id, with_text=with_text)
    except NotFound as exc:
        raise Http404("no such session in this tenant") from exc
    if with_text:
        raw_text_record(tenant=tenant, reader=request.user, session=str(session_id), messages=len(trail["messages"]))
    context.update(trail)
    context.update({"may_read_text": may_read, "with_text": with_text})
    context["timeline_url"] = timeline_url(tenant, entity_type="session", entity_id=str(session_id))
    return render(request, "audit/session.html", context)
