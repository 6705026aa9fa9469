"""Small talk: greetings, thanks, goodbyes and a bare yes or no, in English and Chinese.

A message made only of such words ("Thanks, bye!", "No thanks.", "好的谢谢", "ok") asks nothing:
the offline model answers it politely instead of searching, and the search tool records no
knowledge miss for it whichever model searched — a gap the owner is shown must be a question
nobody could answer, not a "thank you".  Anything more than small talk ("thanks, and do you
deliver?") is not small talk.  Pure: no ORM, no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from enum import StrEnum
from typing import Final

__all__ = ["SmallTalk", "small_talk"]


class SmallTalk(StrEnum):
    """In the order of precedence when a message holds several ("Thanks, bye!" is a goodbye)."""

    GOODBYE = "goodbye"
    NO = "no"
    THANKS = "thanks"
    GREETING = "greeting"
    YES = "yes"


# Each kind's phrases, "|"-separated; a message is small talk when it is nothing but these.
_PHRASES: Final[dict[SmallTalk, list[str]]] = {
    kind: phrases.split("|")
    for kind, phrases in {
        SmallTalk.GOODBYE: "bye|bye bye|goodbye|good bye|see you|see ya|see you later|have a nice day|have a good day"
        "|good night|take care|再见|拜拜|回见|晚安|下次见",
        SmallTalk.NO: "no|nope|nah|not now|not really|nothing else|that's all|thats all|that's it|that is all"
        "|i'm good|im good|i'm fine|never mind|nevermind"
        "|不用|不用了|不了|不需要|不要|没有了|没了|没事|没事了|算了|不必了",
        SmallTalk.THANKS: "thanks|thank you|thank you very much|thanks a lot|many thanks|thx|ty|cheers"
        "|much appreciated|appreciate it|谢谢|谢谢你|谢谢您|多谢|谢了|感谢|非常感谢|谢啦",
        SmallTalk.GREETING: "hi|hello|hey|hiya|hi there|hello there|good morning|good afternoon|good evening"
        "|你好|您好|嗨|哈喽|早上好|下午好|晚上好|早",
        SmallTalk.YES: "yes|yeah|yep|yup|sure|ok|okay|k|kk|alright|all right|great|cool|perfect|fine|got it"
        "|understood|nice|good|awesome|i see"
        "|好|好的|好吧|好嘞|行|嗯|嗯嗯|可以|是的|对|明白|明白了|知道了|收到|没问题|了解",
    }.items()
}
# Words that may join small talk without making it a question: "ok, thanks so much then".
_FILLER: Final = "and|so|much|very|again|then|a lot|for now|啊|呀|哦|哈|啦|了|的|呢".split("|")
_KIND: Final = {phrase: kind for kind, phrases in reversed(list(_PHRASES.items())) for phrase in phrases}
_ALTERNATIVES: Final = sorted([*_KIND, *_FILLER], key=len, reverse=True)
# A Latin phrase ends at a word boundary; a Chinese one anywhere (Chinese has no spaces).
_PIECE: Final = re.compile("|".join(re.escape(p) + (r"\b" if p[-1].isascii() else "") for p in _ALTERNATIVES) + r"|\s+")
_NOT_TEXT: Final = re.compile(r"[^\w\s']+")
MAX_CHARS: Final = 60


def small_talk(text: str) -> SmallTalk | None:
    """What kind of small talk `text` is, or None when it says anything more."""
    normal = _NOT_TEXT.sub(" ", unicodedata.normalize("NFKC", text).lower().replace("’", "'")).strip()
    if not normal or len(normal) > MAX_CHARS:
        return None
    kinds: set[SmallTalk] = set()
    position = 0
    while position < len(normal):
        piece = _PIECE.match(normal, position)
        if piece is None or piece.end() == position:
            return None
        kind = _KIND.get(piece.group())
        if kind is not None:
            kinds.add(kind)
        position = piece.end()
    return next((kind for kind in SmallTalk if kind in kinds), None)
