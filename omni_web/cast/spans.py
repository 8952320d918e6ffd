"""Dialogue spans: each paragraph cut into narration and quoted speech, in the book's quote style.

The cut never changes the text: a paragraph's spans, joined, give back the paragraph character
for character, quote marks included (they stay with the speech). Styles:

- English double quotes ``“…”`` (or straight ``"…"``), single quotes nested inside;
- English single quotes ``‘…’`` (British; or straight ``'…'``), where apostrophes (``don’t``,
  ``’tis``, ``the dogs’ bowls``) are told apart from closing marks;
- guillemets ``« … »`` with French spacing (a space or no-break space inside the marks), and the
  German ``»…«``; a French inverted incise inside them (``« Oui, dit-il, c’est ça. »``) is narration;
- German low-high ``„…“``; Japanese corner brackets ``「…」`` with ``『…』`` nested;
- dash dialogue (French, Spanish, Russian novels): a paragraph opening with ``—`` is speech,
  except its incises (``—Hola —dijo Juan—. ¿Vienes?`` / ``— Bonjour, dit-il.``).

A quote left open at a paragraph's end continues into the next paragraph when that one opens with
the same mark (the English convention for long speeches); otherwise it ends with its paragraph
(a missing closing mark never swallows the rest of the chapter).
"""

from __future__ import annotations

import enum
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

__all__ = [
    "ParagraphSpans",
    "NO_DIALOGUE",
    "QuoteStyle",
    "STYLES",
    "Span",
    "SpanKind",
    "detect_quote_style",
    "split_paragraph",
    "split_paragraphs",
]

_DASHES = "\u2014\u2015\u2013"  # em dash, horizontal bar, en dash (some books open lines with it)
_SPACES = " \u00a0\u202f\u2009\u2007"
# Words written with a leading apostrophe that is not an opening quote.
_ELISIONS = frozenset(
    "tis twas twere twill twould em cause cos til till n ere bout round nough im ave e er is ee un"
    " oo appen".split()
)
# French inverted incise: "dit-il", "répondit-elle", "s'écria-t-il", "demanda Marie" after a comma.
_FRENCH_VERBS = (
    "dit|répondit|demanda|reprit|ajouta|fit|cria|s'écria|s’écria|murmura|souffla|lança|répliqua"
    "|continua|poursuivit|expliqua|interrogea|hurla|chuchota|observa|déclara|rétorqua|soupira|pensa"
)
_FRENCH_INCISE_RE = re.compile(
    rf",[{_SPACES}]+(?:(?:{_FRENCH_VERBS})-(?:t-)?(?:il|elle|ils|elles|on|je|tu|nous|vous)\b"
    rf"|(?:{_FRENCH_VERBS})[{_SPACES}]+(?:[A-ZÀ-Ý][\w’'-]*|le|la|les|l’|l')\b)[^,.;!?»]*[,.;!?]?",
)


class SpanKind(enum.StrEnum):
    """What a span is."""

    NARRATION = "narration"
    DIALOGUE = "dialogue"


@dataclass(frozen=True, slots=True)
class Span:
    """One run of narration or speech within a paragraph; ``text`` is ``paragraph[start:end]``.

    ``continued`` marks speech that goes on from a quote left open at the previous paragraph's end
    (same speaker); ``closed`` is False for speech whose closing mark never came in this paragraph.
    """

    kind: SpanKind
    start: int
    end: int
    text: str
    continued: bool = False
    closed: bool = True

    @property
    def is_dialogue(self) -> bool:
        """True for quoted speech."""
        return self.kind is SpanKind.DIALOGUE


@dataclass(frozen=True, slots=True)
class QuoteStyle:
    """How a book marks speech: its outer quote pair (or dash dialogue) and the marks nested inside."""

    name: str
    opener: str = ""
    closer: str = ""
    dash: bool = False  # speech opens a paragraph with a dash (alone, or beside a quote pair)
    # Marks that may also be apostrophes (single quotes); they need the apostrophe rules.
    apostrophes: bool = False

    @property
    def symmetric(self) -> bool:
        """True when one character both opens and closes (straight quotes)."""
        return self.opener == self.closer

    @classmethod
    def named(cls, name: str) -> QuoteStyle:
        """The style called ``name`` (see :data:`STYLES`)."""
        try:
            return STYLES[name]
        except KeyError:
            raise ValueError(f"Unknown quote style '{name}'. Known: {', '.join(STYLES)}.") from None


STYLES: dict[str, QuoteStyle] = {
    style.name: style
    for style in (
        QuoteStyle("english-double", "\u201c", "\u201d"),
        QuoteStyle("straight-double", '"', '"'),
        QuoteStyle("english-single", "\u2018", "\u2019", apostrophes=True),
        QuoteStyle("straight-single", "'", "'", apostrophes=True),
        QuoteStyle("guillemets", "\u00ab", "\u00bb"),
        QuoteStyle("german-guillemets", "\u00bb", "\u00ab"),
        QuoteStyle("low-high", "\u201e", "\u201c"),
        QuoteStyle("corner-brackets", "\u300c", "\u300d"),
        QuoteStyle("dash", dash=True),
    )
}
NO_DIALOGUE = QuoteStyle("none")


def _is_space(ch: str) -> bool:
    return ch.isspace() or ch in _SPACES


def _opens_at(text: str, i: int) -> bool:
    """A mark at ``i`` is placed like an opening quote: after a space (or start), before a non-space."""
    before = text[i - 1] if i > 0 else " "
    after = text[i + 1] if i + 1 < len(text) else " "
    # "_" before: Gutenberg's plain-text italics around a quote (_"Hush!"_).
    return (_is_space(before) or before in "([{_\u2014\u2013-/\u00ab\u201c\u201e\u2018") and not _is_space(after)


def _is_dash_line(text: str) -> bool:
    stripped = text.lstrip(_SPACES)
    return bool(stripped) and stripped[0] in _DASHES and len(stripped) > 1


def detect_quote_style(paragraphs: Iterable[str]) -> QuoteStyle:
    """The book's speech style, from how its paragraphs use quote marks; ``none`` when none is used."""
    counts: Counter[str] = Counter()
    for text in paragraphs:
        if _is_dash_line(text):
            counts["dash"] += 2  # a dash line is a strong sign: it is how the whole line is marked
        for i, ch in enumerate(text):
            if ch == "\u201c" and _opens_at(text, i):
                counts["english-double"] += 1
            elif ch == "\u201e":
                counts["low-high"] += 1
            elif ch == "\u00ab":
                counts["guillemets"] += 1
            elif ch == "\u00bb" and _opens_at(text, i):
                counts["german-guillemets"] += 1
            elif ch == "\u300c":
                counts["corner-brackets"] += 1
            elif ch == '"' and _opens_at(text, i):
                counts["straight-double"] += 1
            elif ch == "\u2018" and _opens_at(text, i) and not _elision_at(text, i):
                counts["english-single"] += 1
            elif ch == "'" and _opens_at(text, i) and not _elision_at(text, i):
                counts["straight-single"] += 1
    if not counts:
        return NO_DIALOGUE
    # A German book's „…“ also counts as English “ openers at its closers' places: „ decides.
    if counts["low-high"] and counts["low-high"] >= counts["english-double"] / 2:
        name = "low-high"
    else:
        name, _ = counts.most_common(1)[0]
    dash_lines = counts["dash"] // 2
    if name in _WITH_DASH_LINES and dash_lines >= max(2, counts[name] // 10):
        # French (and German) novels open an exchange with « and go on with a dash per reply:
        # both mark speech in the same book.
        return replace(STYLES[name], name=f"{name}+dash", dash=True)
    if name == "dash" and any(counts[n] >= max(2, dash_lines // 10) for n in _WITH_DASH_LINES):
        other = max(_WITH_DASH_LINES, key=lambda n: counts[n])
        return replace(STYLES[other], name=f"{other}+dash", dash=True)
    return STYLES[name]


_WITH_DASH_LINES = ("guillemets", "german-guillemets", "low-high")


def _elision_at(text: str, i: int) -> bool:
    match = re.match(r"[^\W\d_]+", text[i + 1 : i + 12])
    return bool(match) and match.group(0).casefold() in _ELISIONS


@dataclass(frozen=True, slots=True)
class ParagraphSpans:
    """A paragraph's spans, and whether speech was still open at its end."""

    spans: tuple[Span, ...]
    open_at_end: bool

    @property
    def has_dialogue(self) -> bool:
        """True when any span is speech."""
        return any(span.is_dialogue for span in self.spans)


def split_paragraph(text: str, style: QuoteStyle, *, continuing: bool = False) -> ParagraphSpans:
    """Cut one paragraph into narration and speech spans.

    Args:
        text: the paragraph as the book has it (not normalised: the marks are the evidence).
        style: the book's style (:func:`detect_quote_style`).
        continuing: speech was left open at the previous paragraph's end; it continues here only
            when this paragraph opens with the style's opening mark.
    """
    if not text:
        return ParagraphSpans((), False)
    if style.dash and (not style.opener or _is_dash_line(text)):
        return ParagraphSpans(_dash_spans(text), False)
    if not style.opener:
        return ParagraphSpans((Span(SpanKind.NARRATION, 0, len(text), text),), False)
    cuts = _quote_ranges(text, style)
    spans: list[Span] = []
    position = 0
    open_at_end = False
    for number, (start, end, closed) in enumerate(cuts):
        if start > position:
            spans.append(Span(SpanKind.NARRATION, position, start, text[position:start]))
        first = number == 0 and not text[:start].strip(_SPACES)
        spans.extend(
            _with_incises(text, start, end, closed=closed, continued=continuing and first, style=style)
        )
        position = end
        open_at_end = not closed
    if position < len(text):
        spans.append(Span(SpanKind.NARRATION, position, len(text), text[position:]))
    return ParagraphSpans(tuple(spans), open_at_end)


def split_paragraphs(paragraphs: Sequence[str], style: QuoteStyle) -> list[ParagraphSpans]:
    """Split consecutive paragraphs, carrying an open quote from one into the next."""
    result: list[ParagraphSpans] = []
    open_quote = False
    for text in paragraphs:
        split = split_paragraph(text, style, continuing=open_quote)
        result.append(split)
        open_quote = split.open_at_end
    return result


def _quote_ranges(text: str, style: QuoteStyle) -> list[tuple[int, int, bool]]:
    """(start, end, closed) of each outer quote, marks included."""
    ranges: list[tuple[int, int, bool]] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == style.opener and _can_open(text, i, style):
            end = _find_close(text, i, style)
            if end is None:
                ranges.append((i, n, False))
                break
            ranges.append((i, end, True))
            i = end
            continue
        i += 1
    return ranges


def _can_open(text: str, i: int, style: QuoteStyle) -> bool:
    if style.symmetric or style.apostrophes:
        return _opens_at(text, i) and not (style.apostrophes and _elision_at(text, i))
    return True


def _find_close(text: str, start: int, style: QuoteStyle) -> int | None:
    """Index just past the mark that closes the quote opened at ``start``; None when none does."""
    depth = 1
    i = start + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if not style.symmetric and ch == style.opener and ch != style.closer:
            if not style.apostrophes or _can_open(text, i, style):
                depth += 1  # the same pair nested (« … « … » … »)
        elif ch == style.closer and _closes_at(text, i, style):
            if style.apostrophes and _is_apostrophe(text, i, style):
                i += 1
                continue
            depth -= 1
            if depth == 0:
                return i + 1
        elif style.symmetric and ch == style.opener and _opens_at(text, i) and _is_space(text[i - 1]):
            # A straight quote placed like an opener while one is open: the previous quote lacked its
            # closing mark; it ends before this one.
            if not style.apostrophes:
                return _end_before(text, i)
        i += 1
    return None


def _end_before(text: str, i: int) -> int:
    """End the unclosed quote before the spaces leading to index ``i``."""
    while i > 0 and _is_space(text[i - 1]):
        i -= 1
    return i


def _closes_at(text: str, i: int, style: QuoteStyle) -> bool:
    """A mark at ``i`` is placed like a closing quote: after a non-space (or a French space)."""
    if not style.symmetric and not style.apostrophes:
        return True
    before = text[i - 1] if i > 0 else " "
    # A speech broken off ("and Oliver has "" with its dash lost) ends with a mark after a space.
    return not _is_space(before) or not text[i + 1 :].strip(_SPACES + ".,;:!?")


def _is_apostrophe(text: str, i: int, style: QuoteStyle) -> bool:
    """Whether a single-quote closer at ``i`` is an apostrophe instead (the quote stays open)."""
    before = text[i - 1] if i > 0 else " "
    after = text[i + 1] if i + 1 < len(text) else " "
    if before.isalnum() and after.isalnum():
        return True  # inside a word: don't, o'clock, l'homme
    if after.isalnum():
        return True  # placed like an opener: ’tis, ’em, a ’90s
    if not before.isalpha():
        return False  # after punctuation ("Yes,’ she said") it closes
    # After a letter ("dogs’ bowls", "goin’ home"): it closes only when no later closer could.
    j = i + 1
    while j < len(text):
        ch = text[j]
        if ch == style.opener and _can_open(text, j, style) and not style.symmetric:
            return False
        if ch == style.closer and _closes_at(text, j, style):
            after_j = text[j + 1] if j + 1 < len(text) else " "
            if not (text[j - 1].isalnum() and after_j.isalnum()):
                return True  # a better closer comes later
        j += 1
    return False


def _with_incises(
    text: str, start: int, end: int, *, closed: bool, continued: bool, style: QuoteStyle
) -> list[Span]:
    """The speech text[start:end], with French inverted incises inside guillemets as narration."""
    if style.opener != "\u00ab":
        return [Span(SpanKind.DIALOGUE, start, end, text[start:end], continued, closed)]
    return _split_incises(text, start, end, closed=closed, continued=continued)


def _split_incises(text: str, start: int, end: int, *, closed: bool, continued: bool) -> list[Span]:
    spans: list[Span] = []
    position = start
    for match in _FRENCH_INCISE_RE.finditer(text, start, end):
        cut = match.start() + 1  # the comma stays with the speech before the incise
        rest = text[match.end() : end].strip(_SPACES + "\u00bb")
        if not rest:
            break  # an incise at the very end ("…, dit-il. »") is rare; keep the line whole
        spans.append(
            Span(SpanKind.DIALOGUE, position, cut, text[position:cut], continued and not spans, True)
        )
        spans.append(Span(SpanKind.NARRATION, cut, match.end(), text[cut : match.end()]))
        position = match.end()
    spans.append(Span(SpanKind.DIALOGUE, position, end, text[position:end], continued and not spans, closed))
    return spans


# Spanish/Russian incise: " —dijo Juan—" (a dash after a space, before a lowercase word) up to the
# next dash or the line's end; the speech goes on after a closing dash.
_DASH_INCISE_RE = re.compile(rf"[{_SPACES}]+[{_DASHES}][{_SPACES}]?(?=[^\W\d_])")


def _next_incise(text: str, search: int) -> tuple[str, re.Match[str]] | None:
    """The earliest incise at or after ``search``: ("dash", m) or ("french", m)."""
    dash = None
    for match in _DASH_INCISE_RE.finditer(text, search):
        if text[match.end()].islower():
            dash = match
            break
    french = _FRENCH_INCISE_RE.search(text, search)
    if dash is None and french is None:
        return None
    if french is None or (dash is not None and dash.start() < french.start()):
        return "dash", dash  # type: ignore[return-value]
    return "french", french


def _dash_spans(text: str) -> tuple[Span, ...]:
    if not _is_dash_line(text):
        return (Span(SpanKind.NARRATION, 0, len(text), text),)
    spans: list[Span] = []
    position = 0
    search = len(text) - len(text.lstrip(_SPACES)) + 1
    while (found := _next_incise(text, search)) is not None:
        kind, match = found
        if kind == "french":
            cut = match.start() + 1  # the comma stays with the speech
            spans.append(Span(SpanKind.DIALOGUE, position, cut, text[position:cut]))
            end = match.end() if text[match.end() :].strip(_SPACES) else len(text)
            spans.append(Span(SpanKind.NARRATION, cut, end, text[cut:end]))
            position = search = end
            if end == len(text):
                return tuple(spans)  # "— Très bien, répondit Marie." ends on its incise
            continue
        cut = match.start()
        spans.append(Span(SpanKind.DIALOGUE, position, cut, text[position:cut]))
        close = _next_dash(text, match.end())
        stop = len(text) if close is None else close + 1
        # The closing dash and the punctuation right after it stay with the incise.
        while stop < len(text) and (text[stop] in ".,;:" or _is_space(text[stop])):
            stop += 1
        if not text[stop:].strip(_SPACES):
            spans.append(Span(SpanKind.NARRATION, cut, len(text), text[cut:]))
            return tuple(spans)
        spans.append(Span(SpanKind.NARRATION, cut, stop, text[cut:stop]))
        position = search = stop
    spans.append(Span(SpanKind.DIALOGUE, position, len(text), text[position:]))
    return tuple(spans)


def _next_dash(text: str, start: int) -> int | None:
    for i in range(start, len(text)):
        if text[i] in _DASHES:
            return i
    return None
