"""Which language a text is in: the user's choice ("English", "auto") or the book's ``dc:language``.

The one table of language names to ISO 639 codes: text normalisation, QA and read-along speech
recognition (Whisper codes) and the book readers (a Gutenberg "Language: English" header) read it.
"""

from __future__ import annotations

from types import MappingProxyType

__all__ = ["LANGUAGE_NAMES", "language_code"]

# The server's language names (Qwen3-TTS's list: Auto Chinese English French German ..., see
# configs/ and the catalog), their own spellings, and the languages of Project Gutenberg headers.
LANGUAGE_NAMES = MappingProxyType(
    {
        "english": "en", "french": "fr", "german": "de", "spanish": "es", "italian": "it",
        "portuguese": "pt", "russian": "ru", "chinese": "zh", "japanese": "ja", "korean": "ko",
        "arabic": "ar", "cantonese": "yue", "hindi": "hi", "dutch": "nl", "polish": "pl", "turkish": "tr",
        "français": "fr", "deutsch": "de", "español": "es",
        "latin": "la", "finnish": "fi", "swedish": "sv", "danish": "da", "norwegian": "no", "greek": "el",
        "hungarian": "hu", "czech": "cs", "esperanto": "eo",
    }
)


def language_code(*choices: str | None) -> str:
    """The primary ISO 639 code of the first usable choice ("English" -> "en", "fr-CA" -> "fr").

    "auto", "" and None are skipped, so ``language_code(request.language, book_language)`` means
    "the user's choice, else the book's". Returns "" when no choice names a language.
    """
    for choice in choices:
        value = (choice or "").strip().lower().replace("_", "-")
        if not value or value in ("auto", "auto-detect", "auto_detect", "und"):
            continue
        if value in LANGUAGE_NAMES:
            return LANGUAGE_NAMES[value]
        primary = value.split("-", 1)[0]
        if primary.isalpha() and 2 <= len(primary) <= 3:
            return primary
    return ""
