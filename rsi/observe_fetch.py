"""Fetching one feed, guarded (issue 13, Observe).

- Only http(s).  The host is resolved once and the connection goes to that very address (the
  Host header and TLS SNI keep the name), so the address checked is the address connected to:
  a name that resolves to a public address for the check and a private one for the connect
  (DNS rebinding) has no second lookup to exploit.
- Private, loopback, link-local and other non-global addresses are refused unless
  `FACADE_OBSERVE_ALLOW_PRIVATE` is on (tests with a local server) or the address is one of
  `FACADE_OBSERVE_TRUSTED_ADDRESSES` (one intranet feed server, not a whole range).
- Redirects are followed here, at most MAX_REDIRECTS, each hop checked like the first.
- A timeout (FACADE_OBSERVE_TIMEOUT seconds, for connect, each read and the whole fetch) and a
  body cap (FACADE_OBSERVE_MAX_BYTES): the body is streamed and the fetch stops at the cap.
- Conditional GET: the stored ETag / Last-Modified are sent; 304 means nothing new.

Every failure is a `FetchFailed` with a short machine code, never the feed's text."""

from __future__ import annotations

import socket
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

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


def _resolve(host: str, port: int) -> str:
    lookup = _RESOLVER.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    try:
        infos = lookup.result(timeout=int(settings.FACADE_OBSERVE_TIMEOUT))
    except FutureTimeout as exc:
        raise FetchFailed("timeout") from exc
    except (OSError, UnicodeError) as exc:
        raise FetchFailed("dns_failed") from exc
    if not infos:
        raise FetchFailed("dns_failed")
    return str(infos[0][4][0])


def _target(url: str) -> tuple[str, str, str]:
    """(the URL with the host replaced by the address to connect to, the Host header, the host
    name for TLS)."""
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES or not parts.hostname:
        raise FetchFailed("bad_url")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise FetchFailed("bad_url") from exc
    address = _resolve(parts.hostname, port)
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
    deadline = time.monotonic() + limit
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
    with httpx.Client(timeout=httpx.Timeout(limit), follow_redirects=False, trust_env=False) as client:
        for _hop in range(MAX_REDIRECTS + 1):
            connect_url, host_header, sni = _target(url)
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
                        if time.monotonic() > deadline:
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
