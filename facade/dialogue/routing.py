"""WebSocket routes of the dialogue app (wired in facade/asgi.py)."""

from django.urls import path

from .consumers import ChatConsumer

websocket_urlpatterns = [
    path("ws/sessions/<uuid:session_id>/", ChatConsumer.as_asgi(), name="ws-session"),
]
