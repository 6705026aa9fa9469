"""Reads of the knowledge app.  Every query is scoped to one agent inside the SQL itself."""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Count, Max, Min, Q
from django.utils import timezone

from facade.tenancy.models import AgentProfile
from facade.tenancy.rules import Audience

from .models import KnowledgeMiss, Status
from .rules import topic_ref, topic_shown
from .schemas import SearchResult
from .search import SearchQuery, backend_for
from .text import EMPTY_TOPIC, query_terms, topic_label
from .text import terms as text_terms

_CJK_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

SNIPPET = 220
MAX_LIMIT = 50


def search_sql(*, agent_id: int, terms: list[str], audience: Audience, now: dt.datetime, limit: int) -> tuple[str, Any]:
    """The one query a search issues, written by the connection's backend (`knowledge/search/`;
    also measured bare by bench/knowledge.py)."""
    query = SearchQuery(agent_id=agent_id, terms=terms, audience=audience, now=now, limit=limit)
    return backend_for(connection).sql(query, connection)


def _snippet(body: str, terms: list[str]) -> str:
    lowered = body.lower()
    positions = [p for p in (lowered.find(term) for term in terms) if p >= 0]
    start = max(0, min(positions) - SNIPPET // 3) if positions else 0
    text = body[start : start + SNIPPET]
    text = re.sub(r"\s+", " ", text).strip()
    return ("…" if start else "") + text + ("…" if start + SNIPPET < len(body) else "")


def knowledge_search(
    *, agent: AgentProfile, query: str, audience: Audience | str, limit: int = 5
) -> list[SearchResult]:
    """Knowledge of this agent that matches the query, best first (how "best" is decided is the
    database's backend's business: `knowledge/search/`).

    Customers and peers get only approved versions that take effect and are valid now (an
    entry past `valid_until` is never served, whether or not a job has marked it expired);
    owners also get pending versions.  One read-only query, scoped to the agent in its SQL."""
    audience = Audience(audience)
    terms = query_terms(query)
    if not terms:
        return []
    limit = max(1, min(int(limit), MAX_LIMIT))
    now = timezone.now()
    sql, params = search_sql(agent_id=agent.pk, terms=terms, audience=audience, now=now, limit=limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    results = []
    for version_id, entry_id, number, title, body, status, source_type, source_ref, source_version, *more in rows:
        title, body = _in_language_asked(terms, title, body, more[0] if more else None)
        results.append(
            SearchResult(
                entry_id=entry_id,
                version=number,
                version_id=version_id,
                title=title,
                snippet=_snippet(body, terms),
                status=status,
                source={"type": source_type, "ref": source_ref, "version": source_version},
            )
        )
    return results


def _in_language_asked(terms: list[str], title: str, body: str, translations: Any) -> tuple[str, str]:
    """The title and body of an entry in the language the question was asked in: of its own text
    and its translations (`EntryVersion.translations`), the one that shares the most terms with
    the question, and in a tie the one written in the question's script (Chinese or not); its own
    text when nothing tells them apart.  What is returned is what the reply may quote
    (guard/quoting.py reads the snippet), so a translation is cited as approved text like the
    rest of the version."""
    if isinstance(translations, str):  # SQLite returns JSON as text
        translations = json.loads(translations or "{}")
    if not translations:
        return title, body
    asked = set(terms)
    chinese = any(_CJK_CHAR.match(term) for term in terms)

    def score(language: str, text_title: str, text_body: str) -> tuple[int, int]:
        found = len(asked & set(text_terms(f"{text_title}\n{text_body}")))
        return found, int((language == "zh-hans") == chinese)

    own_chinese = _CJK_CHAR.search(title + body) is not None
    best = (score("", title, body)[0], int(own_chinese == chinese), title, body)
    for language, value in sorted(translations.items()):
        other_title = str(value.get("title") or "") or title
        other_body = str(value.get("body") or "")
        if not other_body:
            continue
        found, script = score(language, other_title, other_body)
        if (found, script) > best[:2]:
            best = (found, script, other_title, other_body)
    return best[2], best[3]


@dataclass(frozen=True, slots=True)
class Taboo:
    """What an approved taboo lesson forbids the agent to say, and the entry that says so."""

    entry_id: int
    phrase: str


def taboos_in_effect(agent: AgentProfile) -> tuple[Taboo, ...]:
    """The phrases the agent's taboos forbid: only the served (current, approved) version of
    each taboo entry, valid now — a pending, rejected, quarantined, rolled back or superseded
    one forbids nothing.  One query, whatever the number of taboos (every customer turn reads
    it, as it reads the live contract)."""
    from .models import EntryVersion, Kind

    if agent.pk is None:  # an unsaved agent (a prompt tried out before it is created) has no lessons
        return ()
    now = timezone.now()
    rows = (
        EntryVersion.objects.filter(agent=agent, served=True, status=Status.APPROVED, entry__kind=Kind.TABOO)
        .exclude(taboo_phrase="")
        .filter(
            Q(valid_from__isnull=True) | Q(valid_from__lte=now), Q(valid_until__isnull=True) | Q(valid_until__gt=now)
        )
        .order_by("entry_id")
        .values_list("entry_id", "taboo_phrase")
    )
    return tuple(Taboo(entry_id, phrase) for entry_id, phrase in rows)


def pending_versions(agent: AgentProfile) -> Any:
    from .models import EntryVersion

    return (
        EntryVersion.objects.filter(agent=agent, status=Status.PENDING).select_related("entry").order_by("created_at")
    )


@dataclass(frozen=True, slots=True)
class UnansweredTopic:
    """A topic of questions nothing answered: its key (normalised terms, never the customers'
    sentences), a readable label of it, how often and by how many it was asked, and when."""

    key: str
    label: str
    count: int
    askers: int
    first_seen: dt.datetime
    last_seen: dt.datetime

    @property
    def ref(self) -> str:
        """Its name where its words must not go (the review's aggregate key: `rules.topic_ref`)."""
        return topic_ref(self.key)


@dataclass(frozen=True, slots=True)
class Unanswered:
    topics: list[UnansweredTopic]
    # Topics asked by fewer distinct customers than the threshold: counted, not shown.
    withheld: int
    min_askers: int


def unanswered_topics(agent: AgentProfile, *, limit: int = 200) -> Unanswered:
    """The agent's open topics — the one definition the Unanswered questions page, the owner
    chat's "unanswered", the home count and the inbox's gap lines all use: its misses not yet
    resolved (an answer published for a topic resolves its misses at that moment: the owner's
    pages, or the decision on the review's draft; a topic asked again after that counts anew),
    grouped by topic, most asked first; shown only once `FACADE_UNANSWERED_MIN_ASKERS` distinct
    customers asked it, labelled in the words customers asked, scrubbed."""
    k = int(settings.FACADE_UNANSWERED_MIN_ASKERS)
    groups = (
        KnowledgeMiss.objects.filter(agent=agent, resolved_at__isnull=True)
        .exclude(topic_key=EMPTY_TOPIC)
        .values("topic_key")
        .annotate(
            count=Count("id"),
            askers=Count("asker", distinct=True),
            first_seen=Min("created_at"),
            last_seen=Max("created_at"),
            # The words as one of its customers asked them (each miss keeps its topic's terms in
            # its customer's order); Max makes the pick the same on every read.
            asked=Max("label"),
        )
        .order_by("-count", "-last_seen", "topic_key")
    )
    topics: list[UnansweredTopic] = []
    withheld = 0
    for group in groups:
        askers = group["askers"]
        if askers < k:
            withheld += 1
            continue
        key = group["topic_key"]
        # A term that looks like personal data (a number, an address) is never shown to an
        # owner; a topic of nothing else is not a topic (`rules.topic_for_owner`).
        label = topic_shown(group["asked"] or topic_label(key))
        if not label:
            continue
        if len(topics) < limit:
            topics.append(
                UnansweredTopic(
                    key=key,
                    label=label,
                    count=group["count"],
                    askers=askers,
                    first_seen=group["first_seen"],
                    last_seen=group["last_seen"],
                )
            )
    return Unanswered(topics=topics, withheld=withheld, min_askers=k)


def open_topic_key(agent: AgentProfile, name: str) -> str:
    """The key of the open topic `name` names: its hash (`rules.topic_ref`, what the owner's pages
    send), or the key itself; `name` unchanged when no open topic has that hash (the services
    then answer "not found")."""
    if not name.startswith("topic."):
        return name
    keys = (
        KnowledgeMiss.objects.filter(agent=agent, resolved_at__isnull=True)
        .exclude(topic_key=EMPTY_TOPIC)
        .values_list("topic_key", flat=True)
        .distinct()
    )
    return next((key for key in keys if topic_ref(key) == name), name)


def unanswered_count(agent: AgentProfile) -> int:
    """How many topics the owner's Unanswered questions page lists (for the home page)."""
    return len(unanswered_topics(agent).topics)


UNANSWERED_SHOWN = 10


def unanswered_for_owner_face(agent: AgentProfile, *, limit: int = UNANSWERED_SHOWN) -> list[dict[str, Any]]:
    """The Unanswered questions page's topics as the owner chat lists them, most asked first:
    a label, how often and when last (the same topics as the page)."""
    return [
        {"topic": topic.label, "count": topic.count, "last_seen": topic.last_seen.isoformat()}
        for topic in unanswered_topics(agent, limit=limit).topics
    ]
