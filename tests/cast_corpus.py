"""Speaker attribution graded against novels whose every quote was annotated by hand.

The corpus is the Project Dialogism Novel Corpus (PDNC; Vishnubhotla, Hammond and Hirst, LREC
2022): per novel a ``novel_text.txt``, a ``quotation_info.csv`` (each quote's character spans, its
speaker and its kind: Explicit, Anaphoric or Implicit) and a ``character_info.csv`` (each
character's main name and aliases). Its repository states no licence for the annotations, so they
are not copied here: :func:`ensure_corpus` clones them into a cache, and the offline test reads a
passage annotated for this project (tests/data/cast/).

A novel is read the product's way: ``load_book`` on its text, :func:`book_roster`, then
``chapter_dialogue`` per chapter. Each found quote is placed back in the file's text (blocks are
the file's text with its line breaks joined), and each annotated quote is matched to the found
quote that covers its first part. A quote counts as named when its speaker is given with at least
the floor's confidence, and right when the character named is the annotated speaker: its name or
one of its aliases is among the speaker's names, and none is another character's.
"""

from __future__ import annotations

import ast
import bisect
import csv
import re
import subprocess
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from omni_web.book import load_book
from omni_web.cast import (
    DEFAULT_MIN_CONFIDENCE,
    Attribution,
    Roster,
    book_quote_style,
    book_roster,
    chapter_dialogue,
)
from omni_web.cast.labels import BookLabels, relabelled
from omni_web.cast.reply_hints import answered_as

__all__ = [
    "HELD_OUT",
    "PDNC_URL",
    "GoldQuote",
    "NovelScore",
    "ensure_corpus",
    "novel_dirs",
    "read_gold",
    "score_novel",
]

PDNC_URL = "https://github.com/Priya22/project-dialogism-novel-corpus"
# Never looked at while tuning the rules: their figures are the honest ones.
HELD_OUT = (
    "Emma",
    "HardTimes",
    "TheAgeOfInnocence",
    "TheSignOfTheFour",
    "NightAndDay",
    "APassageToIndia",
    "TheSunAlsoRises",
    "AnneOfGreenGables",
)
KINDS = {"Explicit": "explicit", "Anaphoric": "pronoun/noun", "Implicit": "none"}
_FIRST_PERSON_TAG = re.compile(r"\bI\b")
# Words of names that name nobody alone (titles and articles).
_NOT_NAME_WORDS = frozenset("mr. mrs. miss mr mrs dr. lady sir lord the of de".split())


@dataclass(frozen=True, slots=True)
class GoldQuote:
    """One annotated quote: where its parts are in the text, who says it, and its kind."""

    spans: tuple[tuple[int, int], ...]
    speaker: str
    kind: str  # explicit, pronoun/noun, none
    tag: str  # the referring expression ("said his lady to him"), may be empty


@dataclass(frozen=True, slots=True)
class Gold:
    """A novel's annotation: its quotes and each character's names."""

    quotes: tuple[GoldQuote, ...]
    names: dict[str, frozenset[str]]  # main name -> every name, folded
    first_person: bool
    narrator: str | None  # the main name of a first-person narrator
    speakers: frozenset[str] = frozenset()  # the characters who say at least one quote


@dataclass(slots=True)
class NovelScore:
    """Counts for one novel (or a sum of novels)."""

    quotes: Counter[str] = field(default_factory=Counter)  # by kind, and "all"
    found: Counter[str] = field(default_factory=Counter)
    named: Counter[str] = field(default_factory=Counter)
    right: Counter[str] = field(default_factory=Counter)
    by_confidence: Counter[tuple[float, bool]] = field(default_factory=Counter)
    by_rule: Counter[tuple[str, bool]] = field(default_factory=Counter)
    narrator_quotes: int = 0
    narrator_right: int = 0
    characters: int = 0  # annotated characters the rules named right at least once
    split_characters: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    hints: int = 0  # pairs of speakers the cast offers to merge (Roster.likely_same)
    hints_right: int = 0  # of them, pairs that are one annotated character
    hinted_splits: list[str] = field(default_factory=list)  # split characters with a hint between two names
    offers: int = 0  # speakers with a merge offered first on the cast screen (another speaker)
    offers_right: int = 0  # of them, offers of the same annotated character

    def add(self, other: NovelScore) -> None:
        for mine, theirs in (
            (self.quotes, other.quotes),
            (self.found, other.found),
            (self.named, other.named),
            (self.right, other.right),
            (self.by_confidence, other.by_confidence),
            (self.by_rule, other.by_rule),
        ):
            mine.update(theirs)
        self.narrator_quotes += other.narrator_quotes
        self.narrator_right += other.narrator_right
        self.characters += other.characters
        self.split_characters.extend(other.split_characters)
        self.hints += other.hints
        self.hints_right += other.hints_right
        self.hinted_splits.extend(other.hinted_splits)
        self.offers += other.offers
        self.offers_right += other.offers_right


def ensure_corpus(cache: Path, source: str = PDNC_URL) -> Path:
    """The corpus' ``data`` folder, cloned from ``source`` (a URL or a local git repository) once."""
    data = cache / "data"
    if not data.is_dir():
        cache.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "--quiet", "--depth", "1", source, str(cache)], check=True)
    return data


def novel_dirs(data: Path, names: Iterable[str] = ()) -> list[Path]:
    """The novels' folders (all, or those named)."""
    wanted = set(names)
    return [
        d
        for d in sorted(data.iterdir())
        if (d / "quotation_info.csv").is_file() and (not wanted or d.name in wanted)
    ]


def _fold(name: str) -> str:
    """A name compared without case or a leading article ("The Mouse" is "Mouse")."""
    return re.sub(r"^(?:the|a)\s+", "", name.strip().casefold())


def _names(raw: str) -> set[str]:
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return {raw}
    return {str(v) for v in value} if isinstance(value, (set, list, tuple)) else {str(value)}


def read_gold(folder: Path, *, first_person: bool | None = None) -> Gold:
    """A novel's annotation (``first_person``: known from the corpus index, else judged by its tags)."""
    names: dict[str, frozenset[str]] = {}
    with (folder / "character_info.csv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            main = row["Main Name"]
            names[main] = frozenset(_fold(n) for n in _names(row["Aliases"]) | {main})
    quotes = []
    with (folder / "quotation_info.csv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            spans = tuple((int(a), int(b)) for a, b in ast.literal_eval(row["quoteByteSpans"]))
            kind = KINDS.get(row["quoteType"], "none")
            quotes.append(GoldQuote(spans, row["speaker"], kind, row.get("referringExpression") or ""))
    # The speaker column may use any of the character's names ("Lucy" for "Miss Honeychurch").
    quotes = [replace(q, speaker=_main_name(q.speaker, names)) for q in quotes]
    by_i = Counter(q.speaker for q in quotes if _FIRST_PERSON_TAG.search(q.tag))
    narrator = by_i.most_common(1)[0][0] if by_i else None
    if first_person is None:
        first_person = bool(by_i) and by_i.most_common(1)[0][1] >= 10
    return Gold(
        tuple(quotes),
        names,
        first_person,
        narrator if first_person else None,
        frozenset(q.speaker for q in quotes),
    )


def _main_name(speaker: str, names: dict[str, frozenset[str]]) -> str:
    if speaker in names:
        return speaker
    owners = [main for main, forms in names.items() if _fold(speaker) in forms]
    return owners[0] if len(owners) == 1 else speaker


def _collapsed(text: str) -> tuple[str, list[int]]:
    """``text`` with each run of whitespace as one space and no ``_``, and each kept character's index."""
    out: list[str] = []
    where: list[int] = []
    space = False
    for i, ch in enumerate(text):
        if ch == "_":
            continue  # Gutenberg's _italics_ marks: the reader may drop them
        if ch.isspace():
            space = True
            continue
        if space and out:
            out.append(" ")
            where.append(i - 1)
        space = False
        out.append(ch)
        where.append(i)
    return "".join(out), where


@dataclass(frozen=True, slots=True)
class FoundQuote:
    """A quote the product found, placed in the novel's text."""

    start: int
    end: int
    attribution: Attribution


def found_quotes(
    path: Path, *, roster_of: Callable[..., Roster] = book_roster, labels: BookLabels | None = None
) -> tuple[list[FoundQuote], Roster]:
    """Every quote the product finds in the novel, with its place in the file's text (with the
    LLM's ``labels`` laid over the rules', when given)."""
    text = path.read_text(encoding="utf-8")
    flat, where = _collapsed(text)
    book = load_book(path)
    chapters = list(book.chapters)
    style = book_quote_style(book, chapters)
    roster = roster_of(book, chapters, style=style)
    found: list[FoundQuote] = []
    said = []
    cursor = 0
    for chapter in chapters:
        dialogue = chapter_dialogue(chapter, style, roster=roster)
        if labels is not None:
            dialogue = relabelled(dialogue, labels.for_chapter(chapter.index))
        said.append(dialogue.quotes())
        for paragraph, row in zip(dialogue.paragraphs, dialogue.attributions, strict=True):
            block = "".join(span.text for span in paragraph.spans)
            flat_block, block_where = _collapsed(block)
            at = flat.find(flat_block, cursor) if flat_block else -1
            if at < 0:
                continue
            cursor = at + len(flat_block)
            for span, attribution in zip(paragraph.spans, row, strict=True):
                if not span.is_dialogue or attribution is None:
                    continue
                first = bisect.bisect_left(block_where, span.start)
                last = bisect.bisect_left(block_where, span.end) - 1
                if first > last:
                    continue
                found.append(FoundQuote(where[at + first], where[at + last] + 1, attribution))
    return found, roster.with_likely(answered_as(said, roster))  # the hints the cast screen offers


def _match(found: Sequence[FoundQuote], starts: Sequence[int], span: tuple[int, int]) -> FoundQuote | None:
    """The found quote that covers most of the annotated part ``span``."""
    a, b = span
    k = max(0, bisect.bisect_right(starts, a) - 1)
    best, best_overlap = None, 0
    for quote in found[max(0, k - 1) : k + 3]:
        overlap = min(b, quote.end) - max(a, quote.start)
        if overlap > best_overlap:
            best, best_overlap = quote, overlap
    return best


def _speaking(characters: set[str], gold: Gold) -> set[str]:
    """``characters`` without those the annotation never lets speak, unless that leaves none."""
    return characters & gold.speakers or characters


def characters_of(name: str, roster: Roster, gold: Gold) -> set[str]:
    """The annotated characters a predicted character stands for.

    The name the cast shows decides first ("Mr. Beebe" is Mr. Beebe, though the cast also knows him
    as "Beebe", which the annotation gives his sister). Else its other names do. Characters the
    annotation never lets speak are passed over where a speaker fits too (PDNC lists some surnames,
    "Norris", "Bounderby", as characters of their own with no line). A name no list holds
    ("Mike", whose list has "Mike Campbell" and "Michael") is the one speaker with that word in a
    name of theirs, or with most such words ("May Welland" is "Miss Welland", whose list has "May
    Wellend", not "Mr. Welland").
    """
    if roster.first_person and name == roster.narrator and gold.narrator is not None:
        return {gold.narrator}
    shown = {main for main, names in gold.names.items() if _fold(name) in names} & gold.speakers
    if len(shown) == 1:
        return shown
    forms = {_fold(name), *(_fold(a) for a in roster.aliases(name))}
    found = _speaking({main for main, names in gold.names.items() if forms & names}, gold)
    if found:
        return found
    words = {word for form in forms for word in form.split()} - _NOT_NAME_WORDS
    shared = {
        main: len(words & {word for form in gold.names.get(main, ()) for word in form.split()})
        for main in gold.speakers
    }
    most = max(shared.values(), default=0)
    return {main for main, count in shared.items() if count and count == most}


def score_novel(
    path: Path,
    gold: Gold,
    *,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
    found: tuple[list[FoundQuote], Roster] | None = None,
) -> NovelScore:
    """Grade the product's attribution of one novel against its annotation."""
    quotes, roster = found or found_quotes(path)
    starts = [q.start for q in quotes]
    score = NovelScore()
    names_used: dict[str, set[str]] = {}
    speakers: set[str] = set()
    for item in gold.quotes:
        kinds = ("all", item.kind)
        for kind in kinds:
            score.quotes[kind] += 1
        narrator_quote = gold.narrator is not None and item.speaker == gold.narrator
        score.narrator_quotes += narrator_quote
        match = _match(quotes, starts, item.spans[0])
        if match is None:
            continue
        for kind in kinds:
            score.found[kind] += 1
        attribution = match.attribution
        if attribution.speaker is None:
            continue
        matches = characters_of(attribution.speaker, roster, gold)
        right = matches == {item.speaker}
        score.by_confidence[(round(attribution.confidence, 2), right)] += 1
        score.by_rule[(attribution.rule or _rule(attribution.evidence), right)] += 1
        if attribution.confidence < min_confidence:
            continue
        speakers.add(attribution.speaker)
        for kind in kinds:
            score.named[kind] += 1
            score.right[kind] += right
        score.narrator_right += right and narrator_quote
        if right:
            names_used.setdefault(item.speaker, set()).add(attribution.speaker)
    score.characters = len(names_used)
    score.split_characters = [
        (main, tuple(sorted(used))) for main, used in names_used.items() if len(used) > 1
    ]
    _grade_hints(score, roster, gold, speakers)
    return score


def _one_person(names: Iterable[str], roster: Roster, gold: Gold) -> bool:
    first, second = (characters_of(name, roster, gold) for name in names)
    return len(first) == 1 and first == second


def _grade_hints(score: NovelScore, roster: Roster, gold: Gold, speakers: set[str]) -> None:
    """How many of the cast's merge hints between speakers are one person, and which splits they cover."""
    hinted = {frozenset((a, b)) for a in speakers for b in roster.likely_same(a) if b in speakers}
    score.hints = len(hinted)
    score.hints_right = sum(_one_person(pair, roster, gold) for pair in hinted)
    for speaker in speakers:
        offered = [b for b in roster.likely_same(speaker) if b in speakers][:1]
        score.offers += bool(offered)
        score.offers_right += bool(offered) and _one_person((speaker, *offered), roster, gold)
    score.hinted_splits = [
        main
        for main, used in score.split_characters
        if any(frozenset((a, b)) in hinted for a in used for b in used if a != b)
    ]


def _rule(evidence: str) -> str:
    """The rule an attribution's evidence names, without the words it quotes."""
    head = evidence.split(":")[0]
    return re.sub(r"“[^”]*”|\b[A-Z][\w.’'-]*", "", head).strip()[:40] or head[:40]
