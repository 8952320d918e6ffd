"""Lines that name a chapter in books without markup: "Chapter 12", "CHAPTER XII.", "Part One".

Plain text has no headings, only lines that look like them; PDF headings without an outline are
checked against the same words. A match needs a keyword and a number (arabic, roman or spelled
out) or one of the unnumbered section names (Prologue, Epilogue, Preface, ...), and a short line.
"""

from __future__ import annotations

import re

__all__ = [
    "heading_keyword",
    "is_bare_chapter_label",
    "is_bare_keyword",
    "is_chapter_heading",
    "is_named_section",
    "is_part_heading",
    "looks_like_title_line",
]

_NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred first second "
    "third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth last"
).split()
_NUMBER = (
    r"(?:\d{1,4}|[ivxlcdm]{1,8}|(?:"
    + "|".join(_NUMBER_WORDS)
    + r")(?:[- ](?:"
    + "|".join(_NUMBER_WORDS)
    + r"))?)"
)
_KEYWORDS = r"(?:chapter|chap\.|part|book|volume|vol\.|section|canto|letter|act|scene|stave|fytte|kapitel|chapitre|cap[íi]tulo)"
# "Chapter 12", "BOOK THE SECOND--THE GOLDEN THREAD"
_NUMBERED_RE = re.compile(
    rf"^(?P<keyword>{_KEYWORDS})\s+(?:the\s+)?{_NUMBER}\b\s*[.:—–-]*\s*(?P<rest>.*)$", re.IGNORECASE
)
# "FIRST ACT" (The Importance of Being Earnest), "Second Part. The Return"; not "First book I read".
_ORDINAL_FIRST_RE = re.compile(
    rf"^(?:{'|'.join(_NUMBER_WORDS[_NUMBER_WORDS.index('first'):])})\s+(?P<keyword>{_KEYWORDS})"
    r"\s*(?:[.:—–-]+\s*(?P<rest>.*))?$",
    re.IGNORECASE,
)
_NAMED_RE = re.compile(
    r"^(?:prologue|epilogue|preface|foreword|introduction|afterword|postscript|appendix(?:\s+\w{1,4})?|"
    r"conclusion|interlude|author'?s note|l'envoi|"
    r"(?:editor|translator)[’']?s?[’']? (?:preface|note|introduction)|"
    r"(?:pr[ée]face|avertissement|note) (?:de l[’'] ?[ée]diteur|du traducteur))\s*[.:]?$",
    re.IGNORECASE,
)
_BARE_KEYWORD_RE = re.compile(rf"^{_KEYWORDS}\.?$", re.IGNORECASE)
_BARE_ROMAN_RE = re.compile(r"^(?=[IVXLC]{1,7}\.?$)[IVXLC]+\.?$")  # "XII." alone on its line
_PART_KEYWORDS = frozenset({"part", "book", "volume", "vol"})
_MAX_HEADING_CHARS = 90
_MAX_TITLE_WORDS = 12


def is_chapter_heading(line: str, *, allow_bare_roman: bool = False) -> bool:
    """Whether one line (already stripped) reads as a chapter heading.

    ``allow_bare_roman`` accepts a lone roman numeral ("XII."), which some books use; off by
    default because "I." also starts sentences.
    """
    text = " ".join(line.split())
    if not text or len(text) > _MAX_HEADING_CHARS:
        return False
    match = _numbered(text)
    if match:
        rest = match.group("rest") or ""
        # "Part of the reason was..." is prose: after the number, a title at most, not a sentence.
        return len(rest.split()) <= _MAX_TITLE_WORDS and not rest.endswith((",", ";"))
    if _NAMED_RE.match(text):
        return True
    return allow_bare_roman and bool(_BARE_ROMAN_RE.match(text))


def heading_keyword(line: str) -> str:
    """The word a numbered heading names its level by ("chapter", "act", "scene"), or ""."""
    match = _numbered(" ".join(line.split()))
    return match.group("keyword").casefold().rstrip(".") if match else ""


def is_part_heading(line: str) -> bool:
    """A heading of a level above chapters: "PART ONE--The Old Buccaneer", "Book the Second"."""
    return heading_keyword(line) in _PART_KEYWORDS


def is_bare_chapter_label(line: str) -> bool:
    """A numbered heading with no title after the number ("CHAPTER I.", "Stave 3")."""
    match = _numbered(" ".join(line.split()))
    return match is not None and not (match.group("rest") or "").strip()


def _numbered(text: str) -> re.Match[str] | None:
    return _NUMBERED_RE.match(text) or _ORDINAL_FIRST_RE.match(text)


def is_bare_keyword(line: str) -> bool:
    """A heading word alone, its number on the next line ("CHAPTER" over "1" in The Sun Also Rises)."""
    return bool(_BARE_KEYWORD_RE.match(" ".join(line.split())))


def is_named_section(line: str) -> bool:
    """One of the unnumbered section names: Preface, Epilogue, Afterword, Appendix, ..."""
    return bool(_NAMED_RE.match(" ".join(line.split())))


def looks_like_title_line(line: str) -> bool:
    """A short line without sentence punctuation at its end: a chapter's subtitle ("Down the Rabbit-Hole")."""
    text = " ".join(line.split())
    return (
        0 < len(text.split()) <= _MAX_TITLE_WORDS and not text.endswith((",", ";", ":")) and len(text) <= 80
    )
