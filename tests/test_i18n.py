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
