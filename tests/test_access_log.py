"""Issue 28 §5: a public knowledge search's words (its query string, from an anonymous caller)
never reach the web server's access log — against a real daphne, its real log."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from test_chat_browser import daphne, demo_seeded

from facade.server import path_for_log

MARKER = "zqxmarker-free-cakes"
MARKER_ZH = "免费蛋糕秘密"


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 (loopback test server)
            return int(response.status)
    except urllib.error.HTTPError as refused:
        return int(refused.code)


@pytest.mark.django_db(transaction=True)
def test_search_words_stay_out_of_daphnes_access_log(django_db_setup: Any, tmp_path: Path) -> None:
    demo_seeded()
    query = urllib.parse.urlencode({"q": f"{MARKER} {MARKER_ZH}", "limit": "3"})
    with daphne(tmp_path, PYTHONUNBUFFERED="1") as site:
        assert _get(f"{site}/api/agents/demo-shop/knowledge/search?{query}") == 200
        assert _get(f"{site}/api/agents/no-such-shop/knowledge/search?{query}") == 404
    log = (tmp_path / "daphne.log").read_text(errors="replace")
    # The requests were logged (the access log is on) …
    assert "/api/agents/demo-shop/knowledge/search?…" in log
    assert "/api/agents/no-such-shop/knowledge/search?…" in log
    # … without a word of what was searched, in any spelling.
    for word in (MARKER, MARKER_ZH, urllib.parse.quote(MARKER_ZH), urllib.parse.quote_plus(MARKER_ZH), "q="):
        assert word not in log, f"{word!r} is in daphne's log"


@pytest.mark.parametrize(
    ("path", "logged"),
    [
        ("/api/agents/a/knowledge/search?q=secret", "/api/agents/a/knowledge/search?…"),
        ("/c/shop/?q=x#frag", "/c/shop/?…"),
        ("/c/shop/#q=x", "/c/shop/?…"),
        ("/health", "/health"),
        ("/accounts/password/reset/MQ/cm5x2a-0f1e2d3c4b5a69788796a5b4c3d2e1f0/", "/accounts/password/reset/MQ/…/"),
        ("/accounts/password/reset/MQ/set-password/", "/accounts/password/reset/MQ/set-password/"),
    ],
)
def test_path_for_log(path: str, logged: str) -> None:
    assert path_for_log(path) == logged
