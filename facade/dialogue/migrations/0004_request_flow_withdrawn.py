"""Stored request flows (each agent's, and the copy each request keeps) get the `withdrawn`
state that the default flow now has, so that requests registered before can be withdrawn by
their customer too.  A flow that already names a `withdrawn` state is left as it is; nothing is
removed, and no state's `to` changes (the owner's transitions stay what they were)."""

from __future__ import annotations

from typing import Any

from django.db import migrations

WITHDRAWN = {"next_actor": "nobody", "to": []}


def _with_withdrawn(flow: Any) -> Any:
    if not isinstance(flow, dict) or not isinstance(flow.get("states"), dict) or "withdrawn" in flow["states"]:
        return None
    return {**flow, "states": {**flow["states"], "withdrawn": dict(WITHDRAWN)}}


def add_withdrawn(apps: Any, schema_editor: Any) -> None:
    for app, model_name, field in (("tenancy", "AgentProfile", "request_flow"), ("dialogue", "CustomerRequest", "flow")):
        model = apps.get_model(app, model_name)
        for pk, flow in model.objects.values_list("pk", field).iterator():
            updated = _with_withdrawn(flow)
            if updated is not None:
                model.objects.filter(pk=pk).update(**{field: updated})


class Migration(migrations.Migration):
    dependencies = [
        ("dialogue", "0003_owner_replies_and_preview"),
        ("tenancy", "0004_tenant_owners_require_totp"),
    ]

    operations = [migrations.RunPython(add_withdrawn, migrations.RunPython.noop)]
