"""The approvals app's pages, included by facade/urls.py under `owner/<slug>/`: the inbox, one
card of it (an HTML fragment for the inbox's script and the owner chat) and the demo outbox.

The JSON API stays in facade/urls.py with the rest of `api/`."""

from django.urls import path

from . import web

urlpatterns = [
    path("inbox", web.owner_inbox, name="owner-inbox"),
    path("inbox/<str:change_id>/card", web.owner_inbox_card, name="owner-inbox-card"),
    path("outbox", web.owner_outbox, name="owner-outbox"),
]
