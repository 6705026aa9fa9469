"""Fetching one feed, guarded (issue 13, Observe).

- Only http(s).  The host is resolved once and the connection goes to that very address (the
  Host header and TLS SNI keep the name), so the address checked is the address connected to:
  a name that resolves to a public address for the check and a private one for the connect
  (DNS rebinding) has no second lookup to exploit.
- Private, loopback, link-local and other non-global addresses are refused unless
  `FACADE_OBSERVE_ALLOW_PRIVATE` is on (tests with a local server) or the address is one of
  `FACADE_OBSERVE_TRUSTED_ADDRESSES` (one intranet feed server, not a whole range).
- Redirects are followed here, at most MAX_REDIRECTS, each hop checked like the first.
- One deadline, FACADE_OBSERVE_TIMEOUT seconds from the start, for the whole fetch: the name
  lookup, every connect, TLS handshake, request write and socket read — each header line, every
  redirect hop and the body — gets only the time left (issue 28: a feed that sent a header line
  every 5 s held the fetch for 75 s when each read had its own 10 s).  A body cap
  (FACADE_OBSERVE_MAX_BYTES): the body is streamed and the fetch stops at the cap.
- Conditional GET: the stored ETag / Last-Modified are sent; 304 means nothing new.

Every failure is a `FetchFailed` with a short machine code, never the feed's text."""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpcore
import httpx
from django.conf import settings

from .observe_rules import SCHEMES, address_refused

MAX_REDIRECTS = 5
REDIRECTS = frozenset({301, 302, 303, 307, 308})
USER_AGENT = "Facade-Observe/1 (+feeds)"


class FetchFailed(Exception):
    """`code`: bad_url, refused_address, dns_failed, connect_failed, timeout, too_many_redirects,
    http_error (with `status`), oversize."""

    def __init__(self, code: str, status: int | None = None) -> None:
        super().__init__(code if status is None else f"{code} {status}")
        self.code = code
        self.status = status


@dataclass(frozen=True)
class Fetched:
    status: int  # 200 or 304
    body: bytes
    etag: str
    last_modified: str
    url: str  # the URL finally answered (after redirects)


# getaddrinfo takes no timeout: it runs here, and a lookup that outlasts the fetch's timeout
# fails the fetch (its thread finishes on its own).
_RESOLVER = ThreadPoolExecutor(max_workers=4, thread_name_prefix="observe-dns")


class _Deadline:
    """The monotonic instant the whole fetch must be over by."""

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds

    def left(self, timeout: float | None, error: type[Exception]) -> float:
        """The time an operation may take: what it asked for, cut to what is left of the fetch;
        `error` when nothing is left."""
        remaining = self.at - time.monotonic()
        if remaining <= 0:
            raise error("the fetch's deadline has passed")
        return remaining if timeout is None else min(timeout, remaining)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream, deadline: _Deadline) -> None:
        self._stream = stream
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._deadline.left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._deadline.left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        wrapped = self._stream.start_tls(
            ssl_context, server_hostname, self._deadline.left(timeout, httpcore.ConnectTimeout)
        )
        return _DeadlineStream(wrapped, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's socket backend, every operation bounded by the fetch's one deadline."""

    def __init__(self, deadline: _Deadline) -> None:
        self._backend = httpcore.SyncBackend()
        self._deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._backend.connect_tcp(
            host, port, self._deadline.left(timeout, httpcore.ConnectTimeout), local_address, socket_options
        )
        return _DeadlineStream(stream, self._deadline)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("feeds are fetched over TCP only")

    def sleep(self, seconds: float) -> None:
        time.sleep(min(seconds, self._deadline.left(None, httpcore.ConnectTimeout)))


def _transport(deadline: _Deadline) -> httpx.HTTPTransport:
    """httpx's transport over a connection pool whose sockets keep to `deadline` (httpx takes no
    network backend of its own: the pool it built is replaced by one that has ours)."""
    transport = httpx.HTTPTransport(trust_env=False)
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False),
        network_backend=_DeadlineBackend(deadline),
    )
    return transport


def _resolve(host: str, port: int, deadline: _Deadline) -> str:
    lookup = _RESOLVER.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    try:
        infos = lookup.result(timeout=deadline.left(None, FutureTimeout))
    except FutureTimeout as exc:
        raise FetchFailed("timeout") from exc
    except (OSError, UnicodeError) as exc:
        raise FetchFailed("dns_failed") from exc
    if not infos:
        raise FetchFailed("dns_failed")
    return str(infos[0][4][0])


def _target(url: str, deadline: _Deadline) -> tuple[str, str, str]:
    """(the URL with the host replaced by the address to connect to, the Host header, the host
    name for TLS)."""
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES or not parts.hostname:
        raise FetchFailed("bad_url")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise FetchFailed("bad_url") from exc
    address = _resolve(parts.hostname, port, deadline)
    allowed = settings.FACADE_OBSERVE_ALLOW_PRIVATE or address in settings.FACADE_OBSERVE_TRUSTED_ADDRESSES
    if address_refused(address) and not allowed:
        raise FetchFailed("refused_address")
    shown = f"[{address}]" if ":" in address else address
    netloc = f"{shown}:{parts.port}" if parts.port else shown
    host_header = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, "")), host_header, parts.hostname


def fetch_feed(url: str, *, etag: str = "", last_modified: str = "") -> Fetched:
    limit = int(settings.FACADE_OBSERVE_TIMEOUT)
    cap = int(settings.FACADE_OBSERVE_MAX_BYTES)
    deadline = _Deadline(limit)
    headers = {
        "User-Agent": USER_AGENT,
        "Accept": "application/rss+xml, application/atom+xml, application/xml;q=0.9, */*;q=0.5",
        # The cap counts the bytes received: no compression, so no small body unpacks to a huge one.
        "Accept-Encoding": "identity",
    }
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    with httpx.Client(
        timeout=httpx.Timeout(limit), follow_redirects=False, trust_env=False, transport=_transport(deadline)
    ) as client:
        for _hop in range(MAX_REDIRECTS + 1):
            connect_url, host_header, sni = _target(url, deadline)
            try:
                with client.stream(
                    "GET",
                    connect_url,
                    headers={**headers, "Host": host_header},
                    extensions={"sni_hostname": sni},
                ) as response:
                    if response.status_code in REDIRECTS and response.headers.get("location"):
                        url = urljoin(url, response.headers["location"])
                        continue
                    if response.status_code == 304:
                        return Fetched(304, b"", etag, last_modified, url)
                    if response.status_code != 200:
                        raise FetchFailed("http_error", response.status_code)
                    declared = response.headers.get("content-length", "")
                    if declared.isdigit() and int(declared) > cap:
                        raise FetchFailed("oversize")
                    body = bytearray()
                    for chunk in response.iter_raw():
                        body.extend(chunk)
                        if len(body) > cap:
                            raise FetchFailed("oversize")
                        if time.monotonic() > deadline.at:
                            raise FetchFailed("timeout")
                    return Fetched(
                        200,
                        bytes(body),
                        response.headers.get("etag", "")[:200],
                        response.headers.get("last-modified", "")[:100],
                        url,
                    )
            except httpx.TimeoutException as exc:
                raise FetchFailed("timeout") from exc
            except httpx.HTTPError as exc:
                raise FetchFailed("connect_failed") from exc
        raise FetchFailed("too_many_redirects")
