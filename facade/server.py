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
