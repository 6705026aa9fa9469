"""What the web server (daphne) does before the application runs.

Twisted's HTTP request parses a POSTed `multipart/form-data` or urlencoded body into `args` as
soon as it has arrived — daphne never reads them, it hands the raw body to the application — and
answers a multipart body it cannot parse (one that is only a closing boundary, say) itself, with
`HTTP/1.1 400` and no headers or body at all, before Django or the gate (facade/gate.py) is asked.
Twisted lets a request skip that parsing (`parsePOSTFormSubmission=False`); daphne builds its
requests from the module-level name `WebRequest` on every new connection, so a subclass put in
its place is used from then on.  Every body then reaches Django, which parses it once and
refuses what it cannot parse in the API's error shape (facade/api.py).  Parsing once also saves
Twisted's second pass over every upload."""

from __future__ import annotations

import re
from typing import Any


def leave_forms_to_django() -> bool:
    """Make daphne's requests leave form bodies unparsed; False when daphne is not installed
    (another ASGI server serves the application)."""
    try:
        from daphne import http_protocol
    except ImportError:  # pragma: no cover - daphne is a dependency; another server may be used
        return False
    if getattr(http_protocol.WebRequest, "leaves_forms_to_django", False):
        return True

    class WebRequest(http_protocol.WebRequest):
        leaves_forms_to_django = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["parsePOSTFormSubmission"] = False
            super().__init__(*args, **kwargs)

    http_protocol.WebRequest = WebRequest
    return True


# The access log (daphne's, also under `manage.py runserver`) names every request by its path.
# A query string carries what a caller typed — a public knowledge search's words, an anonymous
# customer's — so it never reaches the log: the path is logged, and "?…" where a query was
# (issue 28 §5).  Every entry passes through `Server.log_action` on its way to the access log.
QUERY_WITHHELD = "?…"
# Django's password reset link carries its one-time token in the path (issue 32):
# /accounts/password/reset/<uidb64>/<token>/ is logged with "…" for the token.
_RESET_LINK = re.compile(r"^(/accounts/password/reset/[^/]+/)(?!set-password/)[^/?#]+/")


def path_for_log(path: object) -> object:
    """`path` without its query string (and fragment), "?…" in its place when there was one, and
    without a password reset link's token."""
    if not isinstance(path, str):
        return path
    path = _RESET_LINK.sub(r"\1…/", path)
    cut = min((i for i in (path.find("?"), path.find("#")) if i >= 0), default=-1)
    return path if cut < 0 else path[:cut] + QUERY_WITHHELD


def keep_queries_out_of_access_log() -> bool:
    """Make daphne log every request's path without its query string; False when daphne is not
    installed."""
    try:
        from daphne import server
    except ImportError:  # pragma: no cover - daphne is a dependency; another server may be used
        return False
    if getattr(server.Server.log_action, "withholds_queries", False):
        return True
    original = server.Server.log_action

    def log_action(self: Any, protocol: str, action: str, details: dict[str, Any]) -> None:
        if isinstance(details, dict) and "path" in details:
            details = {**details, "path": path_for_log(details["path"])}
        original(self, protocol, action, details)

    log_action.withholds_queries = True  # type: ignore[attr-defined]
    server.Server.log_action = log_action
    return True
