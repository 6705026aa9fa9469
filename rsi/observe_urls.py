"""Observe's pages, included by facade/urls.py under `owner/<slug>/` (the JSON API stays in
facade/urls.py with the rest of `api/`)."""

from django.urls import path

from . import observe_web as web

urlpatterns = [
    path("feeds", web.owner_feeds, name="owner-feeds"),
    path("feeds/add", web.owner_feeds_add, name="owner-feeds-add"),
    path("feeds/run", web.owner_feeds_run, name="owner-feeds-run"),
    path("feeds/<int:feed_id>/toggle", web.owner_feed_toggle, name="owner-feed-toggle"),
    path("feeds/candidates/<int:item_id>/propose", web.owner_candidate_propose, name="owner-candidate-propose"),
]
