"""The spoken form of a book: lexicon, then normalisation, applied to every block before chunking.

Chunks are cut from the spoken text, so each chunk's key (a hash of what is sent) changes exactly
when what the narrator is asked to say changes: edit one lexicon entry and only the chunks holding
that word are rendered again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from omni_web.book import Book, Chapter, TextBlock, count_words, normalize_text
from omni_web.catalog import CatalogEntry
from omni_web.languages import language_code
from omni_web.settings import Settings
from omni_web.text.lexicon import Pronouncer
from omni_web.text.normalize import rules_for
from omni_web.text.rules import LanguageRules

__all__ = ["SpokenForm", "normalization_applies", "spoken_form"]

_log = logging.getLogger(__name__)


def normalization_applies(entry: CatalogEntry, settings: Settings) -> bool:
    """Whether numbers and abbreviations are spelled out for this model: the setting, else the catalog."""
    if settings.text_normalization == "on":
        return True
    if settings.text_normalization == "off":
        return False
    return not entry.normalizes_text


@dataclass(frozen=True, slots=True)
class SpokenForm:
    """How one job turns the book's text into what is sent: a pure function of the text.

    ``rules`` is None when normalisation is off or the language has no rules; ``pronouncer`` is
    None without lexicon entries.
    """

    language: str  # ISO 639-1 code, "" when unknown
    rules: LanguageRules | None = None
    pronouncer: Pronouncer | None = None

    def spoken(self, text: str) -> str:
        """One paragraph or heading as it is sent ("" when nothing in it can be spoken)."""
        text = normalize_text(text)
        if text and self.pronouncer:
            text = self.pronouncer.apply(text)
        if text and self.rules is not None:
            text = self.rules.apply(text)
        return normalize_text(text)

    def chapter(self, chapter: Chapter) -> Chapter:
        """The chapter with every block (and its title) in spoken form."""
        if self.rules is None and not self.pronouncer:
            return chapter
        blocks = tuple(TextBlock(kind=b.kind, text=self.spoken(b.text)) for b in chapter.blocks)
        blocks = tuple(b for b in blocks if b.text)
        return replace(
            chapter,
            title=self.spoken(chapter.title) or chapter.title,
            blocks=blocks,
            word_count=sum(count_words(b.text) for b in blocks),
        )


def spoken_form(
    book: Book,
    *,
    entry: CatalogEntry,
    settings: Settings,
    language: str | None = None,
    pronouncer: Pronouncer | None = None,
    announce: bool = True,
) -> SpokenForm:
    """The spoken form for one job: the user's language (else the book's), rules when they apply.

    A language without rules is said once in the log, per job (``announce``), and its text is
    sent unchanged (apart from the lexicon).
    """
    code = language_code(language, book.metadata.language)
    rules = None
    if normalization_applies(entry, settings):
        rules = rules_for(code)
        if rules is None and announce:
            _log.info(
                "No number/abbreviation rules for language %r (book %r): its text is sent as written.",
                code or "unknown", book.metadata.title,
            )
    elif announce:
        _log.info("Text normalisation is off for %s (setting %r).", entry.label, settings.text_normalization)
    return SpokenForm(language=code, rules=rules, pronouncer=pronouncer or None)
