"""Personal data in customer words, removed before anything is made from them (issue 26 §5).

A topic of unanswered questions is built from what a customer wrote, and it reaches the owner's
pages and the daily review.  What must never reach an owner — an e-mail address, a phone or card
number, a long run of digits (an order, account or ID number) — is cut out of the text *before*
the topic exists (`knowledge.text.topic_key`), so no later step has to remember to hide it.

Each rule is named, with its language and the sentences it must and must not match
(tests/test_personal_data.py reads `RULES` as its table).  Pure: no ORM, no settings.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    category: str  # email | phone | card | digits
    language: str  # "any": the pattern is the same in English and Chinese text
    pattern: re.Pattern[str]
    matches: tuple[str, ...]  # sentences whose personal data it removes
    keeps: tuple[str, ...]  # sentences it leaves alone
    min_digits: int = 0  # a match with fewer digits than this is not personal data (left alone)

    def _replace(self, match: re.Match[str]) -> str:
        digits = sum(ch.isdigit() for ch in match.group(0))
        return " " if digits >= self.min_digits else match.group(0)

    def removed(self, text: str) -> str:
        return self.pattern.sub(self._replace, text)


# Order matters: an e-mail first (its digits are part of it), a card before a phone (a card is
# a longer digit group), long runs last (whatever the others left).
RULES: tuple[Rule, ...] = (
    Rule(
        "PD001",
        "email",
        "any",
        # ASCII local part only: \w would swallow the Chinese words written right before it.
        re.compile(r"[A-Za-z0-9._%+\-]+\s*@\s*[A-Za-z0-9\-]+(?:\s*\.\s*[A-Za-z0-9\-]+)+"),
        (
            "reply to someone@example.com please",
            "请发到someone.else+cake@mail.example.cn谢谢",
            "mail me at a.b @ shop.de",
        ),
        ("do you have gift wrapping?", "email support?", "@ the shop"),
    ),
    Rule(
        "PD002",
        "card",
        "any",
        re.compile(r"(?<!\d)\d{4}(?:[ \-]?\d{4}){2}[ \-]?\d{1,7}(?!\d)"),
        ("my card is 4111 1111 1111 1111", "卡号4111-1111-1111-1111可以吗", "charge 5500000000000004"),
        ("open 9 to 5?", "a cake for 12 people", "2026 prices"),
    ),
    Rule(
        "PD003",
        "phone",
        "any",
        # Digit groups joined by spaces, dashes, dots, slashes or brackets, 7 digits or more in
        # all: a phone number however it is written (0171 2345 678, +44 (20) 7946-0958,
        # 138 1234 5678, 13812345678).
        re.compile(r"\+?\(?\d(?:[ \-./()]{0,3}\d)+\)?"),
        ("or call 0171 2345 678", "电话：138 1234 5678", "+44 (20) 7946-0958 any time", "打13812345678"),
        ("open 9 to 5?", "a cake for 12 people", "delivery in 2 or 3 days", "€35.50 for 8 people"),
        min_digits=7,
    ),
    Rule(
        "PD004",
        "digits",
        "any",
        re.compile(r"\d{5,}"),
        ("order 55512 is late", "订单号98765还没到", "postcode 10115"),
        ("a cake for 12 people", "2026 prices", "open 9 to 5"),
    ),
)


def personal_data_removed(text: str) -> str:
    """`text` with every match of `RULES` replaced by a space (fullwidth forms read as ASCII
    first, so "１３８…" and "＠" are caught too)."""
    text = unicodedata.normalize("NFKC", text)
    for rule in RULES:
        text = rule.removed(text)
    return text


def personal_data_found(text: str) -> list[str]:
    """The ids of the rules that would remove something from `text` (each once, in rule order)."""
    found: list[str] = []
    text = unicodedata.normalize("NFKC", text)
    for rule in RULES:
        removed = rule.removed(text)
        if removed != text:
            found.append(rule.id)
            text = removed
    return found
