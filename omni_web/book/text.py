"""Text for speech: normalisation, word counting and sentence splitting (pure functions).

The rules are deliberately conservative: a missed sentence boundary only makes a chunk a little
longer, while a false one puts a pause in the middle of a sentence ("Mr. | Smith"). So a period
never ends a sentence after a known abbreviation or a single capital (initials, "CHAPTER I."), nor
before a lowercase word; scripts without spaces (CJK) end sentences at their own full stops.
"""

from __future__ import annotations

import math
import re
import unicodedata

__all__ = [
    "CLAUSE_PUNCTUATION",
    "count_cjk_chars",
    "count_words",
    "join_text",
    "normalize_text",
    "pack_pieces",
    "split_long_text",
    "split_sentences",
    "text_key",
]

# Ideographs and kana: written without spaces, so each character counts (and may split) as a word.
_CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RE = re.compile(f"[{_CJK_CHARS}]")
_CJK_OR_PUNCT_RE = re.compile(f"[{_CJK_CHARS}\u3000-\u303f\uff00-\uffef]")
_ALNUM_RE = re.compile(r"[^\W_]")
# A counted word: one CJK character, or a space-free run holding a letter or digit.
_WORD_RE = re.compile(f"[{_CJK_CHARS}]|[^\\s{_CJK_CHARS}]*?(?![{_CJK_CHARS}])[^\\W_][^\\s{_CJK_CHARS}]*")

# Characters replaced one for one (spaces, invisible marks, ligatures, typographic quotes).
_TRANSLATE = str.maketrans(
    {
        "\u00a0": " ", "\u2000": " ", "\u2001": " ", "\u2002": " ", "\u2003": " ", "\u2004": " ",
        "\u2005": " ", "\u2006": " ", "\u2007": " ", "\u2008": " ", "\u2009": " ", "\u200a": " ",
        "\u202f": " ", "\u205f": " ", "\u3000": " ",
        "\u00ad": "", "\u200b": "", "\u2060": "", "\ufeff": "",
        "\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
        "\ufb05": "st", "\ufb06": "st",
        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
        "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
        "\u2010": "-", "\u2011": "-", "\u2212": "-",
        "\u2026": "...",
        # Small capitals set as their own letters ("Jᴇᴀɴ-Bᴇʀɴᴀʀᴅ"): the TTS knows the plain ones.
        **dict(zip("ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘꞯʀꜱᴛᴜᴠᴡʏᴢ", "abcdefghijklmnopqrstuvwyz", strict=True)),
    }
)
# An en dash inside a word or number range ("1914–1918", "pages 3–5") is a hyphen.
_RANGE_DASH_RE = re.compile(r"(?<=\w)\u2013(?=\w)")
# Other dashes (em, en with spaces, bars, "--") mark a pause: spoken as a comma.
_PAUSE_DASH_RE = re.compile(r"\s*(?:[\u2013\u2014\u2015\u2e3a\u2e3b]+|-{2,})\s*")
# "Well—" she said: the comma hugs the closing quote.
_COMMA_BEFORE_CLOSING_QUOTE_RE = re.compile(r",\s+(?=[\"'](?:\s|$))")
_SPACED_DOTS_RE = re.compile(r"\s?\.(?:\s\.){2,}")
_SPACE_RE = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT_RE = re.compile(r"\s+(?=[,;:!?\u060c\u061b\u061f](?:\s|$|[\"')\]]))")
_COMMA_BEFORE_PUNCT_RE = re.compile(r",\s*(?=[.!?;:,\u061f])")
_DASH_CHARS = frozenset("\u2013\u2014\u2015\u2e3a\u2e3b")
_COMMA_AFTER_OPEN_RE = re.compile(r"(?<=[(\[])\s*,\s*")

# Clause punctuation where an over-long sentence may be cut (after the mark).
CLAUSE_PUNCTUATION = ",;:\u060c\u061b\u3001\uff0c\uff1b\uff1a"
_CLAUSE_CUT_RE = re.compile(
    "(?<=[,;:\u060c\u061b])\\s+|(?<=[\u3001\uff0c\uff1b\uff1a])\\s*(?=\\S)"
)

# A run of sentence-final punctuation and the closing quotes or brackets after it.
_CLOSERS = "\"')\\]\u00bb\u300d\u300f\u3011\u3015\uff09"
_TERMINATOR_RE = re.compile(f"(?:[.!?\u061f\u06d4\u0964]+|[\u3002\uff01\uff1f]+)[{_CLOSERS}]*")
_OPENERS = "\"'([\u00ab\u00bf\u00a1"
_FULLWIDTH_STOPS = frozenset("\u3002\uff01\uff1f")

# Words after which a period does not end a sentence (compared lowercased, without the final dot).
_ABBREVIATIONS = frozenset(
    """
    mr mrs ms messrs mme mlle dr prof sr jr st mt ft rev hon gen col lt capt cmdr sgt maj adm gov
    sen rep pres supt insp esq vs etc e.g i.e cf viz al approx ca no nos vol vols p pp ch chap sec
    fig figs ed eds trans inc ltd co corp bros dept est jan feb mar apr jun jul aug sep sept oct nov
    dec mon tue tues wed thu thur thurs fri sat sun a.m p.m u.s u.k z.b d.h bzw usw vgl nr s.a
    """.split()
)
_INITIALS_RE = re.compile(r"^(?:[^\W\d_]\.)*[^\W\d_]$")


def normalize_text(text: str) -> str:
    """Clean one paragraph or heading for a TTS model; "" when nothing in it can be spoken.

    Collapses whitespace, drops invisible characters, straightens curly quotes, spells ligatures
    out, turns em dashes into a comma pause ("word—word" -> "word, word") and range dashes into
    hyphens ("1914–1918" -> "1914-1918"), and writes ellipses as "...".
    """
    text = unicodedata.normalize("NFC", text)
    if "\u2013" in text:
        text = _RANGE_DASH_RE.sub("-", text)
    text = text.translate(_TRANSLATE)
    if _DASH_CHARS.intersection(text) or "--" in text:  # the dash pattern is slow on dash-free text
        text = _PAUSE_DASH_RE.sub(", ", text)
        text = _COMMA_BEFORE_CLOSING_QUOTE_RE.sub(",", text)
    if ". ." in text:
        text = _SPACED_DOTS_RE.sub("...", text)
    text = _SPACE_RE.sub(" ", text)
    text = _COMMA_AFTER_OPEN_RE.sub("", text)
    text = _COMMA_BEFORE_PUNCT_RE.sub("", text)
    text = _SPACE_BEFORE_PUNCT_RE.sub("", text)
    text = text.strip(" ,")
    return text if _ALNUM_RE.search(text) else ""


def count_words(text: str) -> int:
    """Words in ``text``: space-separated tokens with a letter or digit, plus each CJK character."""
    return len(_WORD_RE.findall(text))


def count_cjk_chars(text: str) -> int:
    """CJK ideographs and kana in ``text``: each is one of :func:`count_words`' "words"."""
    return len(_CJK_RE.findall(text))


def text_key(text: str) -> str:
    """Letters and digits only, casefolded: for comparing a title with a heading."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).casefold() if ch.isalnum())


def join_text(left: str, right: str) -> str:
    """Join two pieces of text with a space, or with nothing between CJK characters."""
    if not left:
        return right
    if not right:
        return left
    if _CJK_OR_PUNCT_RE.match(left[-1]) and _CJK_OR_PUNCT_RE.match(right[0]):
        return left + right
    return left + " " + right


def split_sentences(text: str) -> list[str]:
    """Split normalised text into sentences; joined with spaces they give back the text.

    A boundary is sentence-final punctuation (. ! ? ... Arabic ؟ ۔, Devanagari ।, CJK 。！？),
    with any closing quotes or brackets after it, followed by a space and a word that does not
    start in lowercase. CJK full stops end a sentence even with no space after them.
    """
    sentences: list[str] = []
    start = 0
    for match in _TERMINATOR_RE.finditer(text):
        end = match.end()
        if _is_boundary(text, match.start(), end):
            piece = text[start:end].strip()
            if piece:
                sentences.append(piece)
            start = end
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def _is_boundary(text: str, start: int, end: int) -> bool:
    """Whether the terminator text[start:end] ends a sentence."""
    marks = text[start:end]
    if marks[0] in _FULLWIDTH_STOPS:
        return True
    if end < len(text) and not text[end].isspace():
        return False  # "3.14", "e.g.,", "?!" inside a token
    rest = text[end:].lstrip().lstrip(_OPENERS)
    if not rest:
        return True
    if rest[0].islower():
        return False  # '"Who?" asked Alice', "etc. and so on", '"Late!" (when she...)'
    stripped = marks.rstrip(_CLOSERS)
    if stripped != ".":
        return True  # "?", "!", "...", "?!" before a capital or an uncased script
    token = text[text.rfind(" ", 0, start) + 1 : start].lstrip("\"'([\u00ab").casefold()
    if not token:
        return True
    if token in _ABBREVIATIONS or _INITIALS_RE.match(token):
        return False  # "Mr. Smith", "J. R. R. Tolkien", "CHAPTER I. Down", "e.g. This"
    return True


def split_long_text(text: str, *, max_words: int, max_chars: int | None) -> list[str]:
    """Cut one sentence into pieces of at most ``max_words`` words and ``max_chars`` characters.

    Cuts at clause punctuation (, ; : and their Arabic and CJK forms) first, then between words,
    in nearly equal parts; a single word longer than ``max_chars`` is cut between characters.
    Joined with :func:`join_text` the pieces give back ``text``.
    """
    if _fits(text, max_words, max_chars):
        return [text]
    clauses = [piece for piece in _CLAUSE_CUT_RE.split(text) if piece]
    if len(clauses) > 1:
        pieces: list[str] = []
        for clause in clauses:
            pieces.extend(split_long_text(clause, max_words=max_words, max_chars=max_chars))
        return pack_pieces(pieces, target_words=max_words, max_chars=max_chars)
    return _split_between_words(text, max_words=max_words, max_chars=max_chars)


def pack_pieces(pieces: list[str], *, target_words: int, max_chars: int | None) -> list[str]:
    """Greedily join consecutive pieces while the result stays within both limits."""
    packed: list[str] = []
    current, current_words = "", 0
    for piece in pieces:
        words = count_words(piece)
        candidate = join_text(current, piece)
        if current and (current_words + words > target_words or not _fits_chars(candidate, max_chars)):
            packed.append(current)
            current, current_words = piece, words
        else:
            current, current_words = candidate, current_words + words
    if current:
        packed.append(current)
    return packed


def _split_between_words(text: str, *, max_words: int, max_chars: int | None) -> list[str]:
    """Cut at word starts into nearly equal parts within the limits."""
    starts = [m.start() for m in _WORD_RE.finditer(text)]
    total = len(starts)
    if total <= 1:
        return _split_between_chars(text, max_chars)
    # Balanced parts: 81 words under a cap of 80 become 41 + 40, not 80 + 1.
    per_part = math.ceil(total / math.ceil(total / max_words))
    parts: list[str] = []
    first = 0
    while first < total:
        last = min(first + per_part, total)
        begin = 0 if first == 0 else starts[first]
        while True:
            piece = text[begin : starts[last] if last < total else len(text)].strip()
            if _fits_chars(piece, max_chars) or last - first == 1:
                break
            last -= 1  # too many characters: give a word back to the next part
        parts.extend(_split_between_chars(piece, max_chars))
        first = last
    return parts


def _split_between_chars(text: str, max_chars: int | None) -> list[str]:
    """Last resort for one enormous word (a URL, a line of symbols)."""
    if max_chars is None or len(text) <= max_chars:
        return [text] if text else []
    return [text[i : i + max_chars] for i in range(0, len(text), max_chars)]


def _fits(text: str, max_words: int, max_chars: int | None) -> bool:
    return count_words(text) <= max_words and _fits_chars(text, max_chars)


def _fits_chars(text: str, max_chars: int | None) -> bool:
    return max_chars is None or len(text) <= max_chars
