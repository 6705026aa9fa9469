"""The API reference page: Redoc, served from this site alone (the schema: facade/api_schema.py).

drf-spectacular-sidecar ships Redoc's standalone bundle as a static file, so no CDN is needed —
but the bundle's sidebar shows a logo it fetches from Redocly's CDN.  The bundle is served here
with that one address blanked (an image without a source: Redoc hides it), so the page asks no
other host for anything and the Content-Security-Policy has nothing to refuse."""

from __future__ import annotations

import functools
from pathlib import Path

from csp.decorators import csp_update
from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from drf_spectacular.views import SpectacularRedocView

BUNDLE = "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
OFFSITE_LOGO = b"https://cdn.redoc.ly/redoc/logo-mini.svg"


@functools.lru_cache(maxsize=1)
def redoc_bundle() -> bytes:
    """The bundle with its off-site logo address blanked; read once per process."""
    found = finders.find(BUNDLE)
    if not found:
        raise FileNotFoundError(f"{BUNDLE} (is drf-spectacular-sidecar installed?)")
    return Path(str(found)).read_bytes().replace(OFFSITE_LOGO, b"")


@require_GET
def redoc_script(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(redoc_bundle(), content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=86400"
    return response


# Redoc styles its page with <style> elements it writes itself, draws its icons as data: images
# and renders in a worker it builds from a blob: the policy is widened for exactly that (nothing
# from another host), on this page only.
api_docs = csp_update({"style-src": ["'unsafe-inline'"], "img-src": ["data:"], "worker-src": ["blob:"]})(
    SpectacularRedocView.as_view(url_name="schema")
)
