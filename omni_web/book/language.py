"""The language a book is written in, from its text, for files that name none (TXT, HTML, Markdown, DOCX ...).

A stopword count, not a model: the commonest short words of each language are counted in a sample
of the text and the language with the largest share wins when it is clearly ahead. Scripts that
belong to one language (Greek, Hebrew, Arabic, Japanese kana, Hangul) decide at once. Good enough to
pick the number rules a book is read with; a file that names its language is always believed.
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["detect_language"]

_STOPWORDS = {
    "en": "the and of to a in that it was he i his you with for had is as her she but not be on at by which",
    "fr": "le la les de des et un une est que qui dans il elle pas pour sur au aux du ne se son sa je vous",
    "de": "der die das und ist nicht ein eine zu den mit sich des auf für dem von er sie es ich wie auch war",
    "nl": "de het een en van is dat niet zijn op te met die voor ik je er maar hij zij ze wat als bij",
    "es": "el la los las de que y en un una es por con para no se su al lo del como más pero sus",
    "it": "il la di che e un una per non è con del della gli le si da in sono al lo ma come",
    "pt": "o a os as de que e um uma em não para com por se do da dos das no na mais como",
}
_WORDS = {code: frozenset(words.split()) for code, words in _STOPWORDS.items()}
_SCRIPTS = (("el", re.compile(r"[\u0370-\u03ff]")), ("he", re.compile(r"[\u0590-\u05ff]")),
            ("ar", re.compile(r"[\u0600-\u06ff]")), ("ja", re.compile(r"[\u3040-\u30ff]")),
            ("ko", re.compile(r"[\uac00-\ud7af]")), ("ru", re.compile(r"[\u0400-\u04ff]")),
            ("zh", re.compile(r"[\u4e00-\u9fff]")))
_WORD_RE = re.compile(r"[^\W\d_]+")
_SAMPLE_CHARS = 20_000
_MIN_HITS = 8  # stopwords needed before any guess: a title page says nothing
_LEAD = 1.5  # the winner's count over the runner-up's


def detect_language(text: str) -> str:
    """The language code ("en", "fr", ...) the text is most likely in; "" when it cannot tell."""
    sample = text[:_SAMPLE_CHARS]
    letters = sum(ch.isalpha() for ch in sample)
    if not letters:
        return ""
    for code, script in _SCRIPTS:
        if len(script.findall(sample)) > letters / 3:
            return code
    counts: Counter[str] = Counter()
    for word in _WORD_RE.findall(sample.casefold()):
        for code, words in _WORDS.items():
            if word in words:
                counts[code] += 1
    ranked = counts.most_common(2)
    if not ranked or ranked[0][1] < _MIN_HITS:
        return ""
    if len(ranked) > 1 and ranked[0][1] < _LEAD * ranked[1][1]:
        return ""
    return ranked[0][0]
