"""Issue 26 §5: personal data is removed from customer words before a topic is made of them.

The rules' own table (knowledge/personal.py: each rule with the sentences it must and must not
match), the topic made of the issue's sentence, and the review report that used to carry the
e-mail's local part."""

from __future__ import annotations

import re
from typing import Any

import pytest

from knowledge.personal import RULES, personal_data_found, personal_data_removed
from knowledge.text import terms, topic_key, topic_words

ISSUE = "reply to someone@example.com or call 0171 2345 678"
PERSONAL = ("someone", "example", "0171", "2345", "678")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
NONCE = re.compile(r'nonce="[^"]*"')


def leaked(text: str) -> list[str]:
    """The issue's personal words that stand as words of `text`.  Not substrings: a report or a
    page also carries random ids, tokens and nonces, and one of those held "678" in a fresh clone's
    run — a failure by chance.  Session ids and CSP nonces (base64, cut into words by + and /) are
    taken out first; every other random value is one long word that no personal word equals."""
    text = NONCE.sub(" ", UUID.sub(" ", text.lower()))
    words = set(re.findall(r"[0-9a-z]+", text))
    return [word for word in PERSONAL if word in words]


@pytest.mark.parametrize(("rule", "sentence"), [(r, s) for r in RULES for s in r.matches], ids=str)
def test_each_rule_removes_what_it_names(rule: Any, sentence: str) -> None:
    assert rule.id in personal_data_found(sentence)
    assert rule.removed(sentence) != sentence


@pytest.mark.parametrize(("rule", "sentence"), [(r, s) for r in RULES for s in r.keeps], ids=str)
def test_each_rule_leaves_ordinary_questions_alone(rule: Any, sentence: str) -> None:
    assert rule.removed(sentence) == sentence


@pytest.mark.parametrize(
    ("text", "gone", "kept"),
    [
        (ISSUE, PERSONAL, ("reply", "call")),
        ("Do you offer gift wrapping? mail a.b@shop.de", ("a", "b", "shop", "de"), ("gift", "wrapping")),
        ("可以礼品包装吗？电话13812345678", ("13812345678",), ("礼品", "包装")),
        ("请发邮件到 wang.li@mail.example.cn 问蛋糕价格", ("wang", "li", "mail", "example", "cn"), ("蛋糕",)),
        ("电话：138 1234 5678，几点开门", ("138", "1234", "5678"), ("几点", "开门")),
        ("card 4111 1111 1111 1111 declined", ("4111", "1111"), ("card", "declined")),
        ("order 55512 late", ("55512",), ("order", "late")),
        ("ＴＥＬ １３８１２３４５６７８ hours", ("13812345678",), ("hours",)),  # fullwidth forms
    ],
)
def test_the_text_a_topic_is_made_from_has_no_personal_data(
    text: str, gone: tuple[str, ...], kept: tuple[str, ...]
) -> None:
    cleaned = terms(personal_data_removed(text))
    for term in gone:
        assert term not in cleaned
    for term in kept:
        assert term in cleaned
    key = topic_key(text).split()
    label = topic_words(text)
    for term in gone:
        assert term not in key and term not in label.split()


def test_the_issue_sentence_makes_a_topic_without_the_address_or_the_number() -> None:
    key, label = topic_key(ISSUE), topic_words(ISSUE)
    assert not any(word in key or word in label for word in PERSONAL), (key, label)


@pytest.mark.django_db
def test_the_review_report_of_the_issue_sentence_carries_no_part_of_it(world_a: Any) -> None:
    """Three customers wrote the issue's sentence: the review's report (its input, claims and
    proposals) and the Unanswered page name the topic without the e-mail or the number."""
    import json

    from django.test import Client

    from facade.dialogue.services import session_open
    from facade.tenancy.rules import Audience
    from facade.tenancy.services import customer_create
    from knowledge.models import KnowledgeMiss
    from knowledge.services import knowledge_miss_record
    from rsi.review import report_view, review_run
    from rsi.review_input import local_today

    for _ in range(3):
        customer = customer_create(tenant=world_a.tenant)
        session = session_open(agent=world_a.agent, audience=Audience.CUSTOMER, customer=customer)
        knowledge_miss_record(agent=world_a.agent, session_id=session.pk, query=ISSUE, asker=str(customer.pk))
    stored = list(KnowledgeMiss.objects.values_list("topic_key", "label"))
    assert all(not any(w in key or w in label for w in PERSONAL) for key, label in stored), stored
    report = review_run(agent_id=world_a.agent.pk, day=local_today(world_a.tenant))
    dumped = json.dumps(report_view(report), ensure_ascii=False).lower()
    assert "call" in dumped  # the topic is there …
    assert not leaked(dumped), leaked(dumped)  # … without its personal data
    client = Client()
    client.force_login(world_a.owner)
    page = client.get(f"/owner/{world_a.agent.slug}/knowledge/unanswered").content.decode().lower()
    assert "reply call" in page and not leaked(page), leaked(page)


@pytest.mark.django_db
def test_the_unanswered_page_shows_no_more_of_a_topic_than_its_label(world_a: Any) -> None:
    """A short number the label leaves out (a house number, a table) stays in the topic's key;
    the page — its tooltip, its links and its forms — carries the label and a hash, never the key."""
    import html
    import re

    from django.test import Client

    from facade.dialogue.services import session_open
    from facade.tenancy.rules import Audience
    from facade.tenancy.services import customer_create
    from knowledge.models import KnowledgeEntry
    from knowledge.selectors import unanswered_topics
    from knowledge.services import knowledge_miss_record

    for _ in range(3):
        customer = customer_create(tenant=world_a.tenant)
        session = session_open(agent=world_a.agent, audience=Audience.CUSTOMER, customer=customer)
        knowledge_miss_record(
            agent=world_a.agent, session_id=session.pk, query="delivery to house 123?", asker=str(customer.pk)
        )
    [topic] = unanswered_topics(world_a.agent).topics
    assert "123" in topic.key and topic.label == "delivery house"
    client = Client()
    client.force_login(world_a.owner)
    page = html.unescape(client.get(f"/owner/{world_a.agent.slug}/knowledge/unanswered").content.decode())
    assert "delivery house" in page and "123" not in page and "topic key" not in page
    [link] = re.findall(r'href="([^"]*/knowledge/new\?topic=[^"]*)"', page)
    draft = html.unescape(client.get(link).content.decode())
    assert "123" not in draft and 'value="delivery house"' in draft
    # The hash the page sends still answers the topic.
    new = f"/owner/{world_a.agent.slug}/knowledge/new"
    answer = {"topic": topic.ref, "title": "Delivery", "body": "We deliver in town.", "questions": topic.label}
    assert client.post(new, answer).status_code == 302
    assert KnowledgeEntry.objects.filter(agent=world_a.agent).count() == 1
    assert unanswered_topics(world_a.agent).topics == []


@pytest.mark.django_db
def test_every_proposed_action_of_the_report_says_it_requires_the_owners_approval(world_a: Any) -> None:
    """The seed's report format: each proposed action carries `"requires": "owner_approval"`, in
    the stored report and in the API's answer alike."""
    from django.test import Client

    from facade.dialogue.services import session_open
    from facade.tenancy.rules import Audience
    from facade.tenancy.services import customer_create
    from knowledge.services import knowledge_miss_record
    from rsi.review import report_view, review_run
    from rsi.review_input import local_today

    for _ in range(3):
        customer = customer_create(tenant=world_a.tenant)
        session = session_open(agent=world_a.agent, audience=Audience.CUSTOMER, customer=customer)
        knowledge_miss_record(
            agent=world_a.agent, session_id=session.pk, query="Do you offer gift wrapping?", asker=str(customer.pk)
        )
    day = local_today(world_a.tenant)
    report = review_run(agent_id=world_a.agent.pk, day=day)
    assert len(report.proposals) == 1
    assert all(p["requires"] == "owner_approval" for p in report.proposals)
    assert [p["requires"] for p in report_view(report)["proposals"]] == ["owner_approval"]
    client = Client()
    client.force_login(world_a.owner)
    answer = client.get(f"/api/agents/{world_a.agent.slug}/reviews/{day.isoformat()}").json()
    assert [p["requires"] for p in answer["proposals"]] == ["owner_approval"]
