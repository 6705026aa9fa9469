"""A real local HTTP server for observe's tests: it serves scripted answers by path on
127.0.0.1 (or another loopback address) in a daemon thread and records every request (path and
headers), so a test can check what the fetcher sent and whether a refused hop was ever reached.

    with FeedServer() as server:
        server.route("/rss", Answer(200, {"Content-Type": "application/rss+xml"}, RSS))
        observe(server.url("/rss"))
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay: float = 0.0  # seconds before the answer (longer than the client's timeout: a hang)


@dataclass(frozen=True)
class Seen:
    path: str
    headers: dict[str, str]


class FeedServer:
    def __init__(self, host: str = "127.0.0.1") -> None:
        self.routes: dict[str, Answer | Callable[[Seen], Answer]] = {}
        self.requests: list[Seen] = []
        self._stopping = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                seen = Seen(self.path, {k.lower(): v for k, v in self.headers.items()})
                owner.requests.append(seen)
                route = owner.routes.get(self.path.split("?")[0])
                answer = (route(seen) if callable(route) else route) if route else Answer(404, body=b"no")
                if answer.delay and owner._stopping.wait(answer.delay):
                    return
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                try:
                    self.wfile.write(answer.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.host = host
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}{path}"

    def route(self, path: str, answer: Answer | Callable[[Seen], Answer]) -> None:
        self.routes[path] = answer

    def paths(self) -> list[str]:
        return [seen.path for seen in self.requests]

    def __enter__(self) -> FeedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        time.sleep(0)


RSS_TYPE = {"Content-Type": "application/rss+xml; charset=utf-8"}
ATOM_TYPE = {"Content-Type": "application/atom+xml; charset=utf-8"}


def rss(*items: tuple[str, str, str, str]) -> bytes:
    """(guid, title, link, description) per item."""
    body = "".join(
        f"<item><guid>{guid}</guid><title>{title}</title><link>{link}</link>"
        f"<description>{text}</description><pubDate>Tue, 01 Dec 2026 04:00:00 GMT</pubDate></item>"
        for guid, title, link, text in items
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Trade news</title>'
        f"<link>https://news.example/</link><description>d</description>{body}</channel></rss>"
    ).encode()


def atom(*entries: tuple[str, str, str, str]) -> bytes:
    """(id, title, link, summary) per entry."""
    body = "".join(
        f'<entry><id>{eid}</id><title>{title}</title><link href="{link}"/>'
        f"<updated>2026-12-01T04:00:00Z</updated><summary>{text}</summary></entry>"
        for eid, title, link, text in entries
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Atom news</title>'
        f"<id>urn:feed</id><updated>2026-12-01T04:00:00Z</updated>{body}</feed>"
    ).encode()
