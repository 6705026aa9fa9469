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


# Every block of the IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and its
# updates, as published in 2026), plus multicast: a feed is never fetched from any of them — also
# not from those the registry marks globally reachable (anycast relays, AS112, AMT), and whatever
# `ipaddress.is_global` says on the running Python (3.11 calls 192.0.0.8 and 192.88.99.1 global).
SPECIAL_PURPOSE_BLOCKS: tuple[str, ...] = (
    # IPv4
    "0.0.0.0/8",  # "this network"
    "10.0.0.0/8",  # private-use
    "100.64.0.0/10",  # shared address space (carrier-grade NAT)
    "127.0.0.0/8",  # loopback
    "169.254.0.0/16",  # link-local
    "172.16.0.0/12",  # private-use
    "192.0.0.0/24",  # IETF protocol assignments (192.0.0.8 dummy, .9 PCP anycast, .10 TURN, .170 NAT64)
    "192.0.2.0/24",  # documentation (TEST-NET-1)
    "192.31.196.0/24",  # AS112-v4
    "192.52.193.0/24",  # AMT
    "192.88.99.0/24",  # deprecated 6to4 relay anycast
    "192.168.0.0/16",  # private-use
    "192.175.48.0/24",  # direct delegation AS112 service
    "198.18.0.0/15",  # benchmarking
    "198.51.100.0/24",  # documentation (TEST-NET-2)
    "203.0.113.0/24",  # documentation (TEST-NET-3)
    "224.0.0.0/4",  # multicast
    "240.0.0.0/4",  # reserved
    "255.255.255.255/32",  # limited broadcast
    # IPv6
    "::/128",  # unspecified
    "::1/128",  # loopback
    "::/96",  # deprecated IPv4-compatible
    "::ffff:0:0/96",  # IPv4-mapped
    "64:ff9b::/96",  # IPv4-IPv6 translation
    "64:ff9b:1::/48",  # local-use IPv4-IPv6 translation
    "100::/64",  # discard-only
    "100:0:0:1::/64",  # dummy IPv6 prefix
    "2001::/23",  # IETF protocol assignments (Teredo, benchmarking, AMT, ORCHID, DET …)
    "2001:db8::/32",  # documentation
    "2002::/16",  # 6to4
    "2620:4f:8000::/48",  # direct delegation AS112 service
    "3fff::/20",  # documentation
    "5f00::/16",  # segment routing (SRv6) SIDs
    "fc00::/7",  # unique-local
    "fe80::/10",  # link-local
    "fec0::/10",  # deprecated site-local
    "ff00::/8",  # multicast
)
_SPECIAL = tuple(ipaddress.ip_network(block) for block in SPECIAL_PURPOSE_BLOCKS)


def address_refused(address: str) -> bool:
    """True for an address a feed must not be fetched from: any address in an IANA special-purpose
    block (SPECIAL_PURPOSE_BLOCKS: private, loopback, link-local, documentation, benchmarking,
    protocol assignments, relays …) or multicast, also when an IPv6 address carries such an IPv4
    one; and anything Python does not call global besides.  Anything that does not parse is
    refused (fail closed)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return True
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is not None and address_refused(str(embedded)):
            return True
    if any(ip.version == block.version and ip in block for block in _SPECIAL):
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
