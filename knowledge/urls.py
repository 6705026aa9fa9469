"""The knowledge app's pages, included by facade/urls.py under `owner/<slug>/`: the knowledge
page, `knowledge/new` (a new entry), `knowledge/unanswered` (Unanswered questions) and
`knowledge/unanswered/attach` (its form's target).

The JSON API stays in facade/urls.py with the rest of `api/`."""

from django.urls import path

from . import web

urlpatterns = [
    path("knowledge", web.owner_knowledge, name="owner-knowledge"),
    path("knowledge/new", web.owner_knowledge_new, name="owner-knowledge-new"),
    path("knowledge/unanswered", web.owner_unanswered, name="owner-unanswered"),
    path("knowledge/unanswered/attach", web.owner_unanswered_attach, name="owner-unanswered-attach"),
]
