"""English and Simplified Chinese from the start: every catalogued string is translated, and
pages follow the visitor's language."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PO = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"


def test_every_catalogued_string_has_a_chinese_translation() -> None:
    import re

    entries = PO.read_text(encoding="utf-8").split("\n\n")[1:]
    assert entries, "the catalogue is empty"

    def msgstr(entry: str) -> str:
        return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', entry.split("\nmsgstr ", 1)[1]))

    untranslated = [e for e in entries if not msgstr(e) or "#, fuzzy" in e]
    assert untranslated == []
    # The compiled catalogue says the same as the source one ("run manage.py compilemessages").
    import gettext

    with PO.with_suffix(".mo").open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    for entry in entries:
        msgid = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', entry.split("msgid ", 1)[1].split("\nmsgstr ", 1)[0]))
        msgstr = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', entry.split("\nmsgstr ", 1)[1]))
        unescape = lambda text: text.encode().decode("unicode_escape").encode("latin-1").decode("utf-8")  # noqa: E731
        assert compiled.gettext(unescape(msgid)) == unescape(msgstr), msgid


@pytest.mark.django_db
def test_pages_follow_the_visitors_language(client: Any, world_a: Any) -> None:
    zh = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="zh-CN")
    assert zh.status_code == 200 and "密码" in zh.content.decode() and 'lang="zh-hans"' in zh.content.decode()
    en = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="en")
    assert "Password" in en.content.decode() and "密码" not in en.content.decode()
    page = client.get(f"/c/{world_a.agent.slug}/", HTTP_ACCEPT_LANGUAGE="zh-Hans")
    assert "发送" in page.content.decode() and "请先写下留言。" in page.content.decode()


@pytest.mark.django_db
def test_the_language_switcher_sets_the_language(client: Any) -> None:
    response = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/"}, HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 302
    assert "登录" in client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()


def test_the_agents_own_sentences_are_catalogued_in_both_languages() -> None:
    """What the agent says itself (the run loop's honest replies, the offline model's sentences,
    the default boundary wording) comes from the catalogue: English is the text itself, and every
    sentence has its Chinese."""
    import re

    from facade.dialogue.runtime.loop import HONEST
    from facade.dialogue.runtime.providers.offline import OWNER, OWNER_ACTORS, OWNER_STATES, QUESTIONS, TEXT
    from facade.dialogue.runtime.summary import SUMMARY
    from facade.tenancy.models import DEFAULT_WORDING

    cjk = re.compile(r"[\u4e00-\u9fff]")
    for book in (HONEST, QUESTIONS, TEXT, SUMMARY, OWNER, OWNER_STATES, OWNER_ACTORS, DEFAULT_WORDING):
        assert list(book) == ["en", "zh-hans"]
        english, chinese = book["en"], book["zh-hans"]
        assert list(english) == list(chinese)
        untranslated = [key for key in english if cjk.search(english[key]) or not cjk.search(chinese[key])]
        assert untranslated == []
    assert HONEST["zh-hans"]["cancelled"] == "已停止。" and HONEST["en"]["cancelled"] == "Stopped."
    assert TEXT["zh-hans"]["registered"].format(id=7, next="…") == "已为您登记请求 #7。下一步：…。"
    with pytest.raises(KeyError):
        HONEST["fr"]


def test_the_boundary_is_the_owners_wording_else_the_catalogues() -> None:
    from facade.tenancy.models import AgentProfile

    default = AgentProfile()
    assert default.boundary_wording == {}
    assert (
        default.boundary("en") == "I can't confirm prices, dates or outcomes here: the owner confirms those personally."
    )
    assert default.boundary("zh-hans") == "价格、时间和结果我在这里无法确认，需要店主本人确认。"
    own = AgentProfile(boundary_wording={"en": "Only the owner can confirm that.", "zh-hans": "只有店主能确认。"})
    assert own.boundary("en") == "Only the owner can confirm that." and own.boundary("zh-hans") == "只有店主能确认。"
    english_only = AgentProfile(boundary_wording={"en": "Only the owner can confirm that."})
    assert english_only.boundary("zh-hans") == "Only the owner can confirm that."


def test_a_phrasebook_follows_the_catalogue_settings(settings: Any) -> None:
    """The translated pages a phrasebook keeps go whenever Django's catalogues do."""
    from django.utils.translation import gettext_lazy

    from facade.i18n import Phrasebook

    book = Phrasebook(stop=gettext_lazy("Stopped."))
    assert book["zh-hans"]["stop"] == "已停止。"
    settings.LOCALE_PATHS = []
    assert book["zh-hans"]["stop"] == "Stopped."  # without the project's catalogue: the source text
    settings.LANGUAGES = [("en", "English")]
    assert list(book) == ["en"] and "zh-hans" not in book
    with pytest.raises(KeyError):
        book["zh-hans"]
