"""Search terms for English and Chinese text: pure functions, used for indexing and querying.

Chinese has no spaces between words, so runs of CJK characters are indexed as overlapping
character bigrams ("增值税" → "增值 值税"); a query is cut the same way, so a Chinese query
matches a Chinese document without a dictionary.  Latin words and numbers are lowercased.
"""

from __future__ import annotations

import re
import unicodedata

_TOKEN = re.compile(r"[0-9a-z]+|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+", re.IGNORECASE)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

# Words too common to help find anything (English); Chinese bigrams are left alone.
STOPWORDS = frozenset(
    "a an and are as at be but by can do does for from how i if in is it me my of on or our so "
    "that the their there this to was we what when where which who why will with you your".split()
)


def terms(text: str) -> list[str]:
    """The search terms of a text, in order, duplicates kept."""
    out: list[str] = []
    for token in _TOKEN.findall(unicodedata.normalize("NFKC", text).lower()):
        if _CJK.match(token):
            if len(token) == 1:
                out.append(token)
            else:
                out.extend(token[i : i + 2] for i in range(len(token) - 1))
        elif token not in STOPWORDS:
            out.append(token)
    return out


def search_text(*parts: str) -> str:
    """What is stored for full-text indexing: the terms joined by spaces."""
    return " ".join(term for part in parts for term in terms(part))


def query_terms(query: str, limit: int = 12) -> list[str]:
    """Distinct terms of a query, at most `limit`, in their order of appearance."""
    seen: dict[str, None] = {}
    for term in terms(query):
        seen.setdefault(term, None)
        if len(seen) >= limit:
            break
    return list(seen)


def topic_key(query: str, size: int = 4) -> str:
    """A short, normalised key for a question nobody could answer: its longest few terms,
    sorted.  It is all that is kept of the customer's words."""
    distinct = sorted(set(query_terms(query, 40)), key=lambda t: (-len(t), t))[:size]
    return " ".join(sorted(distinct)) or "(empty)"


def subject_key(title: str) -> str:
    """The subject an entry is about, for spotting contradictions: its title's terms."""
    return " ".join(terms(title))[:200]
