"""The daily review's pages, included by facade/urls.py under `owner/<slug>/` (the JSON API of
reports stays in facade/urls.py with the rest of `api/`)."""

from django.urls import path

from . import review_web as web

urlpatterns = [
    path("reviews/run", web.owner_review_run, name="owner-review-run"),
    path("reviews/<str:day>", web.owner_review, name="owner-review"),
    path("reviews/<str:day>/status", web.owner_review_status, name="owner-review-status"),
]
