"""ASGI entry point: HTTP through the gate (facade/gate.py) to Django, the chat WebSocket
through Channels.

A WebSocket whose Origin is not exactly one of the site's origins (scheme, host and port; see
facade/origins.py) is refused before any consumer runs, so another site's page — another port
on the same machine included — cannot talk to the chat with a visitor's cookies.  A WebSocket
to a path no consumer serves is denied at the handshake rather than failing it with a 500.

Under daphne, Twisted would parse a POSTed form body itself before the application sees it (and
never use what it found), answering a multipart body it cannot parse — one that is only a closing
boundary — with a bare 400 that has no body and no content type.  `facade.server` turns that off,
so every such body reaches Django and the API answers it in its JSON error shape."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "facade.settings")
django_asgi_app = get_asgi_application()  # sets Django up before the consumers import models

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import WebsocketDenier  # noqa: E402
from django.urls import re_path  # noqa: E402

from facade.dialogue.routing import websocket_urlpatterns  # noqa: E402
from facade.gate import RequestGate  # noqa: E402
from facade.origins import OriginValidator  # noqa: E402
from facade.server import keep_queries_out_of_access_log, leave_forms_to_django  # noqa: E402
from guard.classifier import warm  # noqa: E402

leave_forms_to_django()
keep_queries_out_of_access_log()  # a caller's words (a search's query string) never reach the access log
warm()  # the guard's model is loaded in the background, not on the first customer's reply

application = ProtocolTypeRouter(
    {
        "http": RequestGate(django_asgi_app),
        "websocket": OriginValidator(
            AuthMiddlewareStack(URLRouter([*websocket_urlpatterns, re_path(r"", WebsocketDenier.as_asgi())]))
        ),
    }
)
