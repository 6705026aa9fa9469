"""Pure decisions of observe, over plain data (no ORM, no network): which addresses a feed may be
fetched from, how an item's relevance is scored, and which key de-duplicates it."""

from __future__ import annotations

import hashlib
import ipaddress
import re
from dataclasses import dataclass

SCHEMES = frozenset({"http", "https"})
MAX_KEYWORDS = 20
MAX_KEYWORD_CHARS = 60
TITLE_WEIGHT = 2  # a keyword in the title counts twice as much as one only in the summary
SUMMARY_WEIGHT = 1

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def address_refused(address: str) -> bool:
    """True for an address a feed must not be fetched from: private, loopback, link-local,
    multicast, reserved or unspecified, also when an IPv6 address carries such an IPv4 one.
    Anything that does not parse is refused (fail closed)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return True
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is not None and address_refused(str(embedded)):
            return True
    return bool(
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or not ip.is_global
    )


def keywords_clean(raw: list[str] | str) -> list[str]:
    """The owner's keywords: split on commas (and the Chinese comma) when given as one string,
    trimmed, case-folded duplicates dropped, order kept."""
    items = re.split(r"[,，\n]", raw) if isinstance(raw, str) else list(raw)
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        word = " ".join(str(item).split())
        if word and word.casefold() not in seen:
            seen.add(word.casefold())
            out.append(word)
    return out


def _found(keyword: str, text: str) -> bool:
    if _CJK.search(keyword):
        # Chinese is written without spaces between words: a substring is the word.
        return keyword.casefold() in text.casefold()
    return re.search(rf"(?<!\w){re.escape(keyword)}(?!\w)", text, flags=re.IGNORECASE) is not None


@dataclass(frozen=True)
class Relevance:
    score: int
    matched: list[str]


def relevance(keywords: list[str], title: str, summary: str) -> Relevance:
    """Each keyword found counts TITLE_WEIGHT when in the title, else SUMMARY_WEIGHT when in the
    summary.  English keywords match whole words case-insensitively; a keyword with Chinese (or
    Japanese) characters matches as a substring."""
    score = 0
    matched: list[str] = []
    for keyword in keywords:
        if _found(keyword, title):
            score += TITLE_WEIGHT
        elif _found(keyword, summary):
            score += SUMMARY_WEIGHT
        else:
            continue
        matched.append(keyword)
    return Relevance(score, matched)


def item_key(guid: str, link: str, title: str) -> str:
    """What de-duplicates an item across an agent's digests: its guid, else its link, else its
    title (hashed, so that a long guid fits a fixed column)."""
    basis = guid.strip() or link.strip() or title.strip()
    return hashlib.sha256(basis.encode()).hexdigest()
