"""Normalisation entry points: which rules a language has, and the pure text -> spoken text function."""

from __future__ import annotations

from types import MappingProxyType

from omni_web.languages import language_code
from omni_web.text import lang_de, lang_en, lang_es, lang_fr
from omni_web.text.rules import LanguageRules

__all__ = ["RULES_BY_LANGUAGE", "normalize_for_speech", "rules_for", "supported_languages"]

RULES_BY_LANGUAGE = MappingProxyType(
    {rules.code: rules for rules in (lang_en.RULES, lang_fr.RULES, lang_de.RULES, lang_es.RULES)}
)


def rules_for(language: str | None) -> LanguageRules | None:
    """The rules for a language code or name ("en", "English", "fr-CA"); None when it has none."""
    return RULES_BY_LANGUAGE.get(language_code(language))


def supported_languages() -> tuple[str, ...]:
    """Codes of the languages with rules."""
    return tuple(RULES_BY_LANGUAGE)


def normalize_for_speech(text: str, language: str | None) -> str:
    """``text`` as a narrator would say it in ``language``; unchanged for a language without rules.

    Pure: the same text and language always give the same result, so it can run per paragraph,
    per dialogue span or per chunk.
    """
    rules = rules_for(language)
    return rules.apply(text) if rules is not None else text
