"""Whether the demo outbox is on: the page (`/owner/<slug>/outbox`, approvals/web.py) where a
person trying the demo reads the e-mails the file backend wrote to them — an L3 decision's code
among them.  On only when DEBUG or FACADE_DEMO_OUTBOX is set and e-mail goes to files (`make run`
sets it); the card's code step links to it then, and says nothing of it otherwise."""

from __future__ import annotations

from django.conf import settings

FILE_BACKENDS = frozenset({"facade.outbox_mail.PrivateFileBackend", "django.core.mail.backends.filebased.EmailBackend"})


def outbox_enabled() -> bool:
    return bool(settings.DEBUG or getattr(settings, "FACADE_DEMO_OUTBOX", False)) and (
        settings.EMAIL_BACKEND in FILE_BACKENDS
    )
