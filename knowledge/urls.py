"""The knowledge app's pages, included by facade/urls.py under `owner/<slug>/knowledge`.

The JSON API stays in facade/urls.py with the rest of `api/`."""

from django.urls import path

from . import web

urlpatterns = [path("", web.owner_knowledge, name="owner-knowledge")]
