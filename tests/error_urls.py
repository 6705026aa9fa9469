"""The site's URL conf plus a page that fails, for the 500 page's browser test."""

from django.http import HttpRequest, HttpResponse
from django.urls import path

from facade.urls import handler400, handler403, handler404, handler500, urlpatterns  # noqa: F401


def fail(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a page that fails, on purpose")


urlpatterns = [path("test-fails/", fail), *urlpatterns]
