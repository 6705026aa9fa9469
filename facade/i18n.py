"""The agent's own sentences, in the language of the conversation.

Pages follow the visitor's language (LocaleMiddleware activates it per request).  The agent
answers in the language of the conversation instead (`runtime/prompts.py` reads it from the
principal's messages), which need not be the request's, and a run may have no request at all (a
Celery task).  So its sentences are marked with `gettext_lazy` where they are defined, kept in
the same catalogue as the pages (`locale/`, `manage.py makemessages` finds them), and read in a
language named explicitly:

    WORDS = Phrasebook(greeting=gettext_lazy("Hello!"), stop=gettext_lazy("Stopped."))
    WORDS["zh-hans"]["greeting"]  # "您好！"
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.utils import translation
from django.utils.functional import Promise

# The settings whose change makes Django drop its loaded catalogues (django.test.signals); the
# pages rendered from them go too.
_CATALOGUE_SETTINGS = frozenset({"LANGUAGES", "LANGUAGE_CODE", "LOCALE_PATHS"})


class Phrasebook(Mapping[str, Mapping[str, str]]):
    """Sentences by key, read as `book[language][key]` (a read-only mapping per language, so
    `.get(key)` works too).  Iterating the book walks the languages of `settings.LANGUAGES`; any
    other language is a KeyError.

    A language's page is translated once, on first use, and kept: a chat turn reads a handful of
    sentences, and switching the active language for each would cost more than the turn's
    lookups.  The kept pages are bounded by the languages times the sentences, and dropped whenever Django
    drops its own catalogues (a change of LANGUAGES, LANGUAGE_CODE or LOCALE_PATHS, as tests
    make), so they never outlive the catalogue they were read from."""

    def __init__(self, **sentences: Promise) -> None:
        self._sentences = sentences
        self._pages: dict[str, Mapping[str, str]] = {}
        setting_changed.connect(self._catalogue_changed)  # weak: a book lives as long as its module

    def __getitem__(self, language: str) -> Mapping[str, str]:
        page = self._pages.get(language)
        if page is None:
            if language not in self:
                raise KeyError(language)
            with translation.override(language):
                page = MappingProxyType({key: str(sentence) for key, sentence in self._sentences.items()})
            self._pages[language] = page
        return page

    def __contains__(self, language: object) -> bool:
        return any(code == language for code, _name in settings.LANGUAGES)

    def __iter__(self) -> Iterator[str]:
        return (code for code, _name in settings.LANGUAGES)

    def __len__(self) -> int:
        return len(settings.LANGUAGES)

    def _catalogue_changed(self, *, setting: str, **kwargs: Any) -> None:
        if setting in _CATALOGUE_SETTINGS:
            self._pages = {}
