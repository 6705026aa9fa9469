"""`{% actor actors actor_id %}`: an actor of the ledger as the console shows it (audit/actors.py)
— a person by name and e-mail address, with the ledger's id on hover; anything else as its id."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import format_html

from audit.actors import ActorShown

register = template.Library()


@register.simple_tag
def actor(actors: Any, actor_id: Any) -> str:
    key = str(actor_id or "")
    if not key:
        return format_html("<code>—</code>")
    shown = actors.get(key) if isinstance(actors, dict) else None
    if not isinstance(shown, ActorShown) or not shown.person:
        return format_html("<code>{}</code>", key)
    return format_html('<span class="actor" title="{}">{}</span>', key, shown.text)
