"""Search terms for English and Chinese text: pure functions, used for indexing and querying.

Chinese has no spaces between words, so runs of CJK characters are indexed as overlapping
character bigrams ("增值税" → "增值 值税"); a query is cut the same way, so a Chinese query
matches a Chinese document without a dictionary.  Latin words and numbers are lowercased.

Both languages drop their function words: English stop words, and Chinese pronouns and question
words ("你们", "什么", "吗"…), which would otherwise make "你们卖面包吗" match every entry with a
question that starts "你们".
"""

from __future__ import annotations

import re
import unicodedata

from .personal import personal_data_removed

_TOKEN = re.compile(r"[0-9a-z]+|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+", re.IGNORECASE)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

# Words too common to help find anything (English).
STOPWORDS = frozenset(
    "a an and are as at be but by can do does for from how i if in is it me my of on or our so "
    "that the their there this to was we what when where which who why will with you your".split()
)
# Chinese words that say who is asking or that it is a question, never what about: a run of
# Chinese is cut at them before it is cut into bigrams, so "你们几点开门？" gives 几点 点开 开门
# and "营业时间是什么时候？" gives 营业 业时 时间 时候 (longest first: 什么 before 什).
CJK_FUNCTION_WORDS = (
    "请问 为什么 是不是 有没有 能不能 可不可以 你们 我们 他们 她们 您们 什么 怎么 怎样 可以 一下 "
    "你 您 我 的 是 吗 呢 吧 啊 呀 嘛"
).split()
_CJK_SPLIT = re.compile("|".join(sorted(CJK_FUNCTION_WORDS, key=len, reverse=True)))
# Numbers this long are phone numbers, order numbers or account ids: personal, never a topic.
_LONG_NUMBER = re.compile(r"[0-9]{6,}")


def terms(text: str) -> list[str]:
    """The search terms of a text, in order, duplicates kept."""
    out: list[str] = []
    for token in _TOKEN.findall(unicodedata.normalize("NFKC", text).lower()):
        if _CJK.match(token):
            if len(token) == 1:
                out.append(token)
                continue
            # A character left alone between function words ("好" of "你好吗") is dropped: a
            # single character only ever matches another lone one, and they are common.
            for run in _CJK_SPLIT.split(token):
                out.extend(run[i : i + 2] for i in range(len(run) - 1))
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


EMPTY_TOPIC = "(empty)"

# Words of a question's frame, never what it is about ("do you *offer* gift wrapping?", "can I
# *get* …", "is it *possible* …"): left out of a topic so that its label reads as the customers'
# subject ("gift wrapping") and the ways of asking the same thing share one topic.
TOPIC_FRAME_WORDS = frozenset(
    "offer offers provide provides have has had get got want wanted need needs would could should "
    "please possible any anything some also just like know tell ask asking question still "
    "hi hello hey thanks thank".split()
)


def _topic_terms(query: str, size: int, cjk_size: int) -> list[str]:
    """The terms a topic keeps, in the order the question has them: personal data removed first
    (`knowledge.personal`), then its longest few words and its first few Chinese bigrams."""
    kept = [
        term
        for term in query_terms(personal_data_removed(query), 40)
        if not _LONG_NUMBER.search(term) and term not in TOPIC_FRAME_WORDS
    ]
    cjk = [term for term in kept if _CJK.match(term)][:cjk_size]
    words = set(sorted((term for term in kept if not _CJK.match(term)), key=lambda t: (-len(t), t))[:size])
    chosen = set(cjk) | words
    return [term for term in kept if term in chosen]


def topic_key(query: str, size: int = 4, cjk_size: int = 5) -> str:
    """A short, normalised key for a question nobody could answer: its longest few words and its
    first few Chinese bigrams, sorted.  It is all that is kept of the customer's words, and it is
    made from the question with its personal data already removed (e-mail addresses, phone and
    card numbers, long digit runs: `knowledge.personal`).  Chinese takes the bigrams in the order
    they come (all bigrams have the same length), so that "你们几点开门" and "请问几点开门呀"
    share a key and `topic_label` can join them back into words."""
    return " ".join(sorted(set(_topic_terms(query, size, cjk_size)))) or EMPTY_TOPIC


def topic_words(query: str, size: int = 4, cjk_size: int = 5) -> str:
    """The same terms as `topic_key(query)` in the order the customer wrote them, Chinese bigrams
    joined back into words: the topic's label as it was asked ("same day delivery", where the
    key sorts them "day delivery same").  Empty when the key is empty."""
    chunks: list[str] = []
    for term in dict.fromkeys(_topic_terms(query, size, cjk_size)):
        previous = chunks[-1] if chunks else ""
        if _CJK.fullmatch(term[0]) and previous and _CJK.fullmatch(previous[-1]) and previous[-1] == term[0]:
            chunks[-1] = previous + term[1:]
        else:
            chunks.append(term)
    return " ".join(chunks)


def topic_label(key: str) -> str:
    """A topic key as a person reads it: Chinese bigrams that overlap are joined again
    ("几点 开门 点开" → "几点开门"); words stay as they are.  It has the same search terms as
    the key, so a label attached to an entry as a question matches what the key came from."""
    terms = key.split()
    cjk = [t for t in terms if len(t) == 2 and _CJK.fullmatch(t[0]) and _CJK.fullmatch(t[1])]
    others = [t for t in terms if t not in cjk]
    followers = {t[0]: t for t in cjk}
    heads = [t for t in cjk if not any(o != t and o[1] == t[0] for o in cjk)] or cjk[:1]
    chains: list[str] = []
    used: set[str] = set()
    for head in heads + cjk:
        if head in used:
            continue
        chain, current = head, head
        used.add(head)
        while (nxt := followers.get(current[1])) is not None and nxt not in used:
            chain += nxt[1]
            used.add(nxt)
            current = nxt
        chains.append(chain)
    return " ".join(chains + others)


def subject_key(title: str) -> str:
    """The subject an entry is about, for spotting contradictions: its title's terms."""
    return " ".join(terms(title))[:200]
