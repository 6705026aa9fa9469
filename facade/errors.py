"""The application's one error type.

A service refuses by raising :class:`ApplicationError` with a machine-readable code, a human
detail and the HTTP status that fits the refusal — the raiser knows whether it is a conflict, a
missing object or bad input, so no edge guesses the status from the code.  The HTTP edge
(`facade.api.exception_handler`) and the WebSocket edge (the chat consumer's error frame) read
it the same way: `{"error": code, "detail": detail}` over HTTP, an `error` frame with the same
code and detail over the WebSocket, plus `retry_after` where waiting helps and any `extra`
fields a refusal carries for the caller to act on (e.g. `remaining_attempts`).

Nothing here imports Django REST framework: services, tasks and consumers raise it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus


class ApplicationError(Exception):
    """A refusal the caller can act on.  Subclasses name where it comes from and may set another
    default status; a raiser passes `http_status` when the refusal is not bad input."""

    http_status: int = HTTPStatus.BAD_REQUEST

    def __init__(
        self,
        code: str,
        detail: str,
        http_status: int | None = None,
        *,
        retry_after: int | None = None,
        extra: Mapping[str, int | str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        if http_status is not None:
            self.http_status = int(http_status)
        self.retry_after = retry_after
        self.extra = dict(extra or {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, http_status={self.http_status}, detail={self.detail!r})"
