"""A real SMTP server for the tests that send e-mail: aiosmtpd on a free loopback port, with
Django's SMTP backend pointed at it and Celery tasks run inline.  Registered as a plugin of the
root conftest (`pytest_plugins`)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from email import message_from_bytes
from email.message import Message as EmailMessage
from typing import Any

import pytest
from aiosmtpd.controller import Controller


class Inbox:
    """Messages a real SMTP server (aiosmtpd) received."""

    def __init__(self) -> None:
        self.received: list[tuple[list[str], EmailMessage]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.received.append((list(envelope.rcpt_tos), message_from_bytes(envelope.content)))
        return "250 OK"


@pytest.fixture
def smtp(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Inbox]:
    """The server's inbox; FACADE_PUBLIC_URL is `https://shop.example` unless the test sets it."""
    from facade.celery import app as celery_app

    inbox = Inbox()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
        settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
        settings.FACADE_PUBLIC_URL = "https://shop.example"
        monkeypatch.setitem(celery_app.conf, "CELERY_TASK_ALWAYS_EAGER", True)
        yield inbox
    finally:
        controller.stop()
