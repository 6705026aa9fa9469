"""What a live contract publishes to customers: its price list and its delivery options, as text a
reply may cite (issue 26 §1).

An L3 `pricing` or `delivery` change goes through proposal → the owner's code → the contract
compiler; once version N is live, that is what the business has published, and a customer who asks
a price or how things are delivered is told it — cited as the price list (or the delivery
options) of version N, exactly as a reply cites an approved knowledge entry.  So the customer
face's search (`facade/dialogue/runtime/builtin_tools.knowledge_found`) returns them as results
beside the knowledge it finds, and puts them among the run's citations with the text a reply may
quote (`snippet`): the outgoing check (guard/quoting.py, guard/restating.py) then lets an
attributed quote or a faithful restatement of a listed price through, as it does for an entry,
while "so your total is €70" — the price applied to this customer's order — and any amount that
is not in the list are still stopped.

Pure: the contract's content in, text out (no ORM); the nightly re-check (guard/recheck.py)
rebuilds a cited list from the contract version the reply cited with the same functions.

Which part of the list a question gets (`found_in`):

* it names listed items — by their whole name or a shorter one ("birthday cake" for "Birthday
  cake (8 people)"), by any of an item's names (an item may be listed with its name in English and
  in Chinese: "生日蛋糕多少钱？" finds it too) — those items, each its own result, quoted by the
  item's name in the conversation's language;
* it asks the prices in general ("what are your prices?", 你们的价格是多少？) — the whole list;
* it asks the price of something the list does not name — the whole list, marked as not
  answering (`matched: false`): the customer still hears the boundary wording;
* it asks about delivery ("do you deliver?", 可以送货吗？) — the delivery options; marked as not
  answering when the customer asks for a day or a time, or for a delivery price the options do
  not state.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from django.conf import settings
from django.utils.translation import gettext_lazy as _

from facade.i18n import Phrasebook
from guard.figures import read

from .contract_rules import item_name, item_names

__all__ = [
    "DELIVERY",
    "PRICING",
    "Published",
    "answered_by_published",
    "asks_about",
    "cited_again",
    "found_in",
    "published_citation",
    "recorded",
]

PRICING: Final = "pricing"
DELIVERY: Final = "delivery"

TITLES = Phrasebook(
    pricing=_("Price list (version {version})"),
    delivery=_("Delivery options (version {version})"),
)
# The same words as the contract page's (facade/contract_web.py), so one translation serves both.
CHANNELS = Phrasebook(
    pickup=_("Pick-up"),
    post=_("Post"),
    courier=_("Courier"),
    email=_("E-mail"),
    onsite=_("On site"),
)


@dataclass(frozen=True)
class Published:
    """A part of the live contract as a search result: `units` are the listed lines (an item and
    its price, a delivery option and its note) the question gets, `every_unit` all of the part's
    (what may be quoted), `matched` whether they answer it, in the conversation's `language`."""

    part: str
    version: int
    title: str
    units: tuple[str, ...]
    every_unit: tuple[str, ...]
    matched: bool
    language: str = "en"

    @property
    def snippet(self) -> str:
        return _separator(self.language).join(self.every_unit)

    def citation(self) -> dict[str, Any]:
        """The run's citation of this part (what the outgoing check may read as quoted)."""
        return published_citation(
            part=self.part, version=self.version, title=self.title, units=self.every_unit, language=self.language
        )


def _colon(language: str) -> str:
    return "：" if language.startswith("zh") else ": "


def _separator(language: str) -> str:
    return "；" if language.startswith("zh") else "; "


def title(part: str, version: int, language: str) -> str:
    return TITLES[language][part].format(version=version)


def _priced(pricing: Mapping[str, Any] | None, language: str) -> list[tuple[tuple[str, ...], str]]:
    """Each listed item's names (every language's), and its line in `language` — its name in that
    language, else its main name — with the published amount and currency."""
    pricing = pricing or {}
    currency = str(pricing.get("currency") or "")
    listed = []
    for item in pricing.get("items") or []:
        if not isinstance(item, dict) or item.get("amount") is None:
            continue
        name = item_name(item, language)
        if name:
            names = tuple(dict.fromkeys([name, *item_names(item).values()]))
            listed.append((names, f"{name}{_colon(language)}{str(item['amount']).strip()} {currency}".strip()))
    return listed


def price_units(pricing: Mapping[str, Any] | None, language: str) -> tuple[str, ...]:
    """Each listed item with its published amount and currency: "Birthday cake (8 people): 35.00 EUR"."""
    return tuple(unit for _names, unit in _priced(pricing, language))


def delivery_units(delivery: Iterable[Any] | None, language: str) -> tuple[str, ...]:
    """Each delivery option with the owner's note: "Courier: within 3 working days"."""
    units = []
    for option in delivery or []:
        if not isinstance(option, Mapping):
            continue
        channel = str(option.get("channel") or "")
        label = CHANNELS[language].get(channel) or channel
        note = " ".join(str(option.get("note") or "").split())
        units.append(f"{label}{_colon(language)}{note}" if note else label)
    return tuple(units)


def units_of(part: str, content: Mapping[str, Any], language: str) -> tuple[str, ...]:
    if part == PRICING:
        return price_units(content.get(PRICING), language)
    return delivery_units(content.get(DELIVERY), language)


def published_citation(
    *, part: str, version: int, title: str, units: Sequence[str], language: str = "en"
) -> dict[str, Any]:
    """A citation of a published part, shaped as a knowledge citation (`title`, `snippet`) so the
    quoting and restating checks read it the same way; `entry_id` and `version_id` are None (it
    is no knowledge entry), `published` names the part and `units` holds its lines."""
    return {
        "entry_id": None,
        "version": version,
        "version_id": None,
        "title": title,
        "snippet": _separator(language).join(units),
        "published": part,
        # Its lines one by one: strict composition quotes "n.k" as line k alone (an item asked).
        "units": list(units),
    }


def recorded(citation: Mapping[str, Any]) -> dict[str, Any]:
    """What a reply's message keeps of a citation: the entry and version it quoted — or, for a
    published part, the part and the contract version (the nightly re-check rebuilds its text)."""
    kept = {k: citation[k] for k in ("entry_id", "version", "title")}
    if citation.get("published"):
        kept["published"] = citation["published"]
    return kept


def answered_by_published(found: Iterable[Mapping[str, Any]]) -> bool:
    """Whether a search's results hold a published part that answers the question asked."""
    return any(r.get("published") and r.get("matched") for r in found)


# --- which part a question gets ------------------------------------------------------------------

_PRICE_ASK: Final = re.compile(
    r"\b(?:prices?|priced|pricing|costs?|costing|how much|fees?|charges?|rates?|tariffs?|price ?list|menu)\b"
    r"|多少钱|价格|价钱|价目|价位|收费|费用|报价|怎么卖|几块钱|多少",
    re.IGNORECASE,
)
_DELIVERY_ASK: Final = re.compile(
    r"\b(?:deliver(?:s|y|ies|ed|ing)?|ship(?:s|ping|ped)?|postage|by post|courier|pick-?up"
    r"|pick (?:\w+ ){1,2}up|collect(?:ion)?|take ?away|send it|mail it)\b"
    r"|送货|配送|快递|邮寄|外送|送到|送上门|上门|自取|自提|取货|发货|派送|能送|可以送|送吗|送不送",
    re.IGNORECASE,
)
_WHEN_ASK: Final = re.compile(
    r"\b(?:when|by (?:when|tomorrow|tonight)|today|tonight|tomorrow|how (?:long|soon|fast)|same[- ]day)\b"
    r"|什么时候|几点|几天|多久|多长时间|今天|明天|后天|今晚|当天",
    re.IGNORECASE,
)
# The words a question is asked with, not the thing asked about.
_ASKING_EN: Final = frozenset(
    "a an the of for to in on at by with and or is are was were be been it its it's this that these those there "
    "here what what's whats which how much many do does did can could would will shall should may might i i'd "
    "i'm me my we our us you your you're yours they them their please tell say know let see show give get "
    "have has had any some about current currently now today just also all every each per one ones thing "
    "things item items product products service services list lists menu price prices priced pricing cost "
    "costs costing fee fees charge charges rate rates tariff tariffs pay paying buy buying sell sells selling "
    "offer offers hi hello hey thanks thank ok okay so well like want need would".split()
)
_ASKING_ZH: Final = re.compile(
    r"请问|请|问一下|问下|一下|你们|您们|你家|贵店|本店|店里|这里|这边|我想|想|知道|了解|的|是|都|有|有没有|没有|哪些|什么|怎么|"
    r"多少钱|多少|价格|价钱|价目表|价目|价位|收费|费用|报价|怎么卖|卖|几块钱|一个|一份|个|份|吗|呢|啊|呀|吧|嘛|"
    r"现在|目前|大概|一般|要|能|可以|告诉|我|看看|看|下|一"
)
_LATIN: Final = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CJK_RUN: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_BRACKETS: Final = re.compile(r"\([^)]*\)|（[^）]*）|\[[^\]]*\]|【[^】]*】")


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _stem(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("es") and len(word) > 4 and word[-3] in "sxz":
        return word[:-2]
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _latin(text: str) -> set[str]:
    return {_stem(word) for word in _LATIN.findall(_normal(text))}


def _cjk(text: str) -> str:
    return "".join(_CJK_RUN.findall(_normal(text)))


@dataclass(frozen=True)
class _Asked:
    latin: frozenset[str]  # the question's own words, the asking words left out
    chinese: tuple[str, ...]  # its runs of Chinese characters, the asking words left out
    cjk: str  # all its Chinese characters

    @property
    def general(self) -> bool:
        return not self.latin and not self.chinese


def _asked(question: str) -> _Asked:
    text = _normal(question)
    latin = frozenset(_latin(text) - {_stem(word) for word in _ASKING_EN})
    chinese = tuple(run for run in _CJK_RUN.findall(_ASKING_ZH.sub(" ", text)) if len(run) >= 2)
    return _Asked(latin=latin, chinese=chinese, cjk=_cjk(text))


def _names_item(asked: _Asked, name: str) -> bool:
    """Whether the question names the item: its whole name without what stands in brackets, or
    only words of its name ("cake" names every cake)."""
    core = _BRACKETS.sub(" ", _normal(name))
    core_latin, every_latin = _latin(core) - {"and", "of", "the", "a", "with"}, _latin(name)
    core_cjk, every_cjk = _cjk(core), _cjk(name)
    if core_latin and core_latin <= asked.latin and (core_cjk == "" or core_cjk in asked.cjk):
        return True
    if len(core_cjk) >= 2 and core_cjk in asked.cjk and (not core_latin or core_latin <= asked.latin):
        return True
    if asked.latin and asked.latin <= every_latin and not asked.chinese:
        return True
    return bool(asked.chinese) and all(run in every_cjk for run in asked.chinese) and not asked.latin


def found_in(question: str, *, content: Mapping[str, Any], version: int | None, language: str) -> list[Published]:
    """The parts of a live contract (`content`, of `version`) a customer's or a peer's question
    gets, as the module docstring says; none for an agent without a published version."""
    if version is None:
        return []
    text = _normal(question)
    asked = _asked(question)
    price_ask, delivery_ask = bool(_PRICE_ASK.search(text)), bool(_DELIVERY_ASK.search(text))
    found: list[Published] = []
    priced = _priced(content.get(PRICING), language)
    prices = tuple(unit for _names, unit in priced)
    if prices:
        items = [
            unit for names, unit in priced if not asked.general and any(_names_item(asked, name) for name in names)
        ]
        listed = title(PRICING, version, language)
        if items:
            found += [Published(PRICING, version, listed, (unit,), prices, True, language) for unit in items]
        elif price_ask and asked.general:
            found.append(Published(PRICING, version, listed, prices, prices, True, language))
        elif price_ask and not delivery_ask:
            found.append(Published(PRICING, version, listed, prices, prices, False, language))
    options = delivery_units(content.get(DELIVERY), language)
    if options and delivery_ask:
        states_price = any(f.kind == "money" for unit in options for f in read(unit))
        answers = not _WHEN_ASK.search(text) and not any(f.kind in ("date", "time") for f in read(text))
        answers = answers and (states_price or not price_ask)
        found.append(
            Published(DELIVERY, version, title(DELIVERY, version, language), options, options, answers, language)
        )
    return found


def asks_about(part: str, question: str, content: Mapping[str, Any]) -> bool:
    """Whether `question` gets `part` of `content` (the replay preview's pick of the turns a
    pricing or delivery proposal concerns)."""
    return any(found.part == part for found in found_in(question, content=content, version=0, language="en"))


def cited_again(cited: Mapping[str, Any], content: Mapping[str, Any]) -> dict[str, Any]:
    """A reply's recorded citation of a published part (`recorded`) as the run had it, rebuilt
    from the content of the contract version it names: the text in the language its title is in
    (every language's, when the title is none of them — a translation changed since)."""
    part, version, shown = str(cited.get("published")), int(cited["version"]), str(cited.get("title") or "")
    languages = [code for code, _name in settings.LANGUAGES]
    same = [code for code in languages if title(part, version, code) == shown]
    units = tuple(unit for code in (same[:1] or languages) for unit in units_of(part, content, code))
    return published_citation(part=part, version=version, title=shown, units=units, language=(same or ["en"])[0])
