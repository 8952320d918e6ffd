"""The characters who speak in a book: one record per character, however many names they go by.

:func:`book_roster` reads the book once to learn its characters' names (which forms are one
person, their genders, whether a first-person narrator speaks); :func:`find_characters` then
attributes every quote with it and lists each character with their aliases, a gender and age
guess, how many lines they speak and one line to hear them by. The user's edits (merge, split,
rename, hide; :class:`~.edits.CastEdits`) are laid over the roster before either counts.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from omni_web.book import Book, Chapter, count_words, normalize_text
from omni_web.cast.dialogue import DEFAULT_MIN_CONFIDENCE, Quote, book_quote_style, chapter_dialogue
from omni_web.cast.edits import CastEdits
from omni_web.cast.name_hints import likely_same
from omni_web.cast.name_written import written_aliases
from omni_web.cast.names import (
    NAME_PARTICLES,
    Age,
    Gender,
    Vocabulary,
    age_guess,
    clean_name,
    name_pairs,
    name_words,
)
from omni_web.cast.narrator_name import narrator_forms
from omni_web.cast.reply_hints import answered_as
from omni_web.cast.roles import role_forms
from omni_web.cast.roster import Roster, first_person_share, group_forms, pronoun_genders
from omni_web.cast.sections import section_tellers
from omni_web.cast.spans import ParagraphSpans, QuoteStyle
from omni_web.cast.tags import TagKind, tag_after

__all__ = ["Character", "book_roster", "find_characters"]

# A first-person book's narration says "I"/"my"/"me" this often per word (measured: first-person
# novels 1.5-4 %, third-person ones under 0.4 % outside quotes).
_FIRST_PERSON_SHARE = 0.008
# Paragraphs with "I said" that make a narrator of a book told in the third person (the corpus:
# Winnie-the-Pooh's frame has 10, the other 23 third-person novels 0 or 1).
_FRAME_LINES = 3
# A sample line long enough to judge a voice by, short enough to hear at once.
_SAMPLE_MIN_WORDS = 5
_SAMPLE_MAX_WORDS = 30
# Capitalised runs of the narration, titles kept ("Mrs. Bennet", "Winnie-the-Pooh", "Fitzwilliam Darcy").
# A name's lowercase particles ("Mr. van der Luyden", "Catherine de Bourgh") belong to it.
_CAPITALISED_RE = re.compile(
    rf"(?:(?:Mr|Mrs|Ms|Dr|Mme|Mlle|St)\.\s+(?:{NAME_PARTICLES})?)?[A-ZÀ-Ý][\w’'\-]*"
    rf"(?:\s+(?:{NAME_PARTICLES})?[A-ZÀ-Ý][\w’'\-]*){{0,2}}"
)


@dataclass(frozen=True, slots=True)
class Character:
    """One character of the book as the cast lists it.

    ``name`` is the character's one name (the form the book uses most, or the user's rename);
    ``aliases`` the other forms the book calls them by; ``narrator`` marks the first-person
    narrator ("I said"); ``hidden`` a name the user took off the cast.
    """

    name: str
    quotes: int  # quotes attributed with at least the cast's confidence
    words: int  # words in those quotes
    sample: str  # one of their lines (normalised, without the quote marks)
    first_chapter: int  # 1-based number of the chapter they first speak in
    aliases: tuple[str, ...] = ()
    gender: Gender = Gender.UNKNOWN
    age: Age = Age.UNKNOWN
    narrator: bool = False
    hidden: bool = False
    maybe: tuple[str, ...] = ()  # characters this one may be under another name, for the user to merge

    @property
    def id(self) -> str:
        """A stable key for the character: its name folded ("Mr. Darcy" -> "mr-darcy")."""
        return re.sub(r"[^\w]+", "-", self.name.casefold()).strip("-") or "character"

    @property
    def names(self) -> tuple[str, ...]:
        """Every form of the character's name, its own first."""
        return (self.name, *self.aliases)

    def known_as(self, label: str) -> bool:
        """True when ``label`` is one of the character's names (any case)."""
        return label.casefold() in {n.casefold() for n in self.names}


def _sample_text(quote: str) -> str:
    return normalize_text(quote).strip("\"'«»„“”‘’「」『』—―_ ")


def _sample_score(text: str) -> int:
    """How well a line shows a voice: a whole sentence of a few words beats a fragment."""
    words = count_words(text)
    score = 2 if _SAMPLE_MIN_WORDS <= words <= _SAMPLE_MAX_WORDS else 0
    score += 1 if text[:1].isupper() else 0
    score += 1 if text[-1:] in ".!?" else 0
    return score


def _says_i(paragraph: ParagraphSpans, roster: Roster) -> bool:
    """Whether a quote of the paragraph is tagged "I said" ("“…,” said I")."""
    spans = paragraph.spans
    return any(
        span.is_dialogue
        and not after.is_dialogue
        and (tag := tag_after(after.text, roster.resolve)) is not None
        and tag.kind is TagKind.FIRST_PERSON
        for span, after in zip(spans, spans[1:], strict=False)
    )


def _narration(chapters: Sequence[Chapter], style: QuoteStyle) -> list[str]:
    """The narration of the chapters (quotes cut out), paragraph by paragraph."""
    texts: list[str] = []
    for chapter in chapters:
        for paragraph in chapter_dialogue(chapter, style, roster=None).paragraphs:
            text = " ".join(span.text for span in paragraph.spans if not span.is_dialogue).strip()
            if text:
                texts.append(text)
    return texts


def _name_the_narrator(canonical: dict[str, str], forms: Sequence[str], narrator: str) -> None:
    """Give the narrator the forms of their name, from what the others call them ("You must
    come, Jake."), and every form of the same character."""
    for form in forms:
        for other in [f for f, name in canonical.items() if name == canonical.get(form)] or [form]:
            canonical[other] = narrator


def _told_in_parts(canonical: Mapping[str, str], tellers: Sequence[set[str]]) -> bool:
    """Whether two or more people tell the book's parts (Dracula's journals; Treasure Island's
    chapters "Narrative Continued by the Doctor" and "Narrative Resumed by Jim Hawkins", Jim being
    its narrator): each part's "I" is its teller. ``tellers``: those each chapter's headers name."""
    whole = Roster(canonical=canonical, first_person=True, told_in_parts=True)
    return len({whole.told_by(teller).narrator for teller in set().union(*tellers)}) >= 2


def _mostly_untold(tellers: Sequence[set[str]]) -> bool:
    """Whether most chapters name no teller: the book has a narrator who hands a few parts to
    others (Treasure Island's three chapters by the Doctor), unlike Dracula's journals."""
    return 2 * sum(bool(named) for named in tellers) < len(tellers)


def book_roster(
    book: Book,
    chapters: Sequence[Chapter] | None = None,
    *,
    style: QuoteStyle | None = None,
    edits: CastEdits | None = None,
) -> Roster:
    """The book's roster: its characters' names joined, their genders, a first-person narrator.

    Args:
        book: the parsed book.
        chapters: where to look (default: the chapters selected by default).
        style: the book's quote style (default: detected on ``chapters``).
        edits: the user's corrections, laid over what the book gives.
    """
    chosen = list(chapters) if chapters is not None else [c for c in book.chapters if c.selected_by_default]
    style = style or book_quote_style(book, chosen)
    narration = _narration(chosen, style)
    vocabulary = Vocabulary.of(block.text for chapter in chosen for block in chapter.blocks)
    told_by_i = first_person_share(narration) >= _FIRST_PERSON_SHARE
    bare = Roster(vocabulary=vocabulary, first_person=told_by_i)
    narrator_lines = 0  # paragraphs where "I said" tags a quote
    tagged: Counter[str] = Counter()
    lines: list[tuple[bool, list[str]]] = []  # speaking paragraphs: the narrator's own?, their quotes
    for chapter in chosen:
        dialogue = chapter_dialogue(chapter, style, roster=bare)
        for paragraph, row in zip(dialogue.paragraphs, dialogue.attributions, strict=True):
            quotes = [span.text for span in paragraph.spans if span.is_dialogue]
            if quotes:
                lines.append((any(a is not None and a.rule == "narrator" for a in row), quotes))
                narrator_lines += _says_i(paragraph, bare)
            for attribution in row:
                speaker = attribution.speaker if attribution is not None else None
                # A letter's signature is not the form the book's tags give its writer ("DRACULA.").
                firm = attribution is not None and attribution.confidence >= 0.8
                if speaker is not None and firm and attribution.rule != "signed" and speaker != bare.narrator:
                    tagged[speaker] += 1
    # A tag's form weighs more than a mention's: the character's name is the one their lines go by.
    counts: Counter[str] = Counter({form: 4 * n for form, n in tagged.items()})
    words = {w for name in tagged for w in name_words(name)}
    mentioned: Counter[str] = Counter()
    others: Counter[str] = Counter()
    for text in narration:
        for match in _CAPITALISED_RE.finditer(text):
            form = clean_name(match.group(0), vocabulary)
            if form is None or form in tagged or vocabulary.is_place(form):
                continue
            (mentioned if set(name_words(form)) & words else others)[form] += 1
    # A name only the narration uses counts when it comes back or is made of speakers' words: a
    # place before a name ("to London Lydia went") is written once.
    counts.update({f: n for f, n in mentioned.items() if n >= 2 or set(name_words(f)) <= words})
    # Someone the narration names often and calls "he" or "she" is a character a pronoun tag may
    # mean, even if no tag names them (a place is not followed by "she").
    frequent = [f for f, n in others.items() if n >= 2]
    counts.update({f: others[f] for f in pronoun_genders(narration, frequent)})
    # "The Newland Archers", "the Allens": a family, not one of its people, and no tag names them.
    families = {f for f in counts if f.endswith("s") and f[:-1] in counts and f not in tagged}
    people = Counter({f: n for f, n in counts.items() if f not in families})
    texts = [block.text for chapter in chosen for block in chapter.blocks]
    # "says the king", where no one is "King X": the king is a character (Huckleberry Finn).
    people.update(role_forms(texts, [*tagged, *mentioned, *others], people))
    canonical, genders = group_forms(people, narration, pairs := name_pairs(texts), written_aliases(texts))
    likely = likely_same(canonical, genders, people, pairs)
    # A book told in the third person by someone who talks with its people now and then ("'What
    # about a story?' I said.") has a narrator too; one "I thought" is a slip of the parser.
    first_person = told_by_i or narrator_lines >= _FRAME_LINES
    tellers = [section_tellers([[block.text for block in chapter.blocks]]) for chapter in chosen]
    told_in_parts = _told_in_parts(canonical, tellers)
    if told_by_i and (not told_in_parts or _mostly_untold(tellers)):
        _name_the_narrator(canonical, narrator_forms(lines, tagged, vocabulary), bare.narrator)
    roster = Roster(
        canonical=canonical,
        genders=genders,
        vocabulary=vocabulary,
        first_person=first_person,
        likely=likely,
        told_in_parts=told_in_parts,
    )
    return edits.apply(roster) if edits is not None else roster


def find_characters(
    book: Book,
    *,
    chapters: Sequence[Chapter] | None = None,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
    min_quotes: int = 2,
    edits: CastEdits | None = None,
    roster: Roster | None = None,
) -> tuple[Character, ...]:
    """The book's characters who speak, most quotes first.

    Args:
        book: the parsed book.
        chapters: where to look (default: the chapters selected by default).
        min_confidence: quotes below it are not counted for anyone.
        min_quotes: characters with fewer quotes are left out (one-off guesses are mostly noise).
        edits: the user's merges, splits, renames and hidden names.
        roster: the book's roster when the caller has it (else :func:`book_roster`).
    """
    chosen = list(chapters) if chapters is not None else [c for c in book.chapters if c.selected_by_default]
    style = book_quote_style(book, chosen)
    roster = roster or book_roster(book, chosen, style=style, edits=edits)
    counts: Counter[str] = Counter()
    words: Counter[str] = Counter()
    samples: dict[str, str] = {}
    first: dict[str, int] = {}
    said: list[list[Quote]] = []
    for chapter in chosen:
        said.append(chapter_dialogue(chapter, style, roster=roster).quotes())
        for quote in said[-1]:
            name = quote.attribution.speaker
            if name is None or quote.attribution.confidence < min_confidence:
                continue
            counts[name] += 1
            text = _sample_text(quote.text)
            words[name] += count_words(text)
            first.setdefault(name, chapter.number)
            current = samples.get(name)
            if current is None or _sample_score(text) > _sample_score(current):
                samples[name] = text
    roster = roster.with_likely(answered_as(said, roster))
    people = [
        Character(
            name,
            counts[name],
            words[name],
            samples.get(name, ""),
            first[name],
            aliases=roster.aliases(name),
            gender=roster.gender(name),
            age=age_guess(roster.aliases(name) + (name,)),
            narrator=name == roster.narrator and roster.first_person,
            maybe=roster.likely_same(name),
        )
        for name in counts
        if counts[name] >= min_quotes
    ]
    return tuple(sorted(people, key=lambda c: (-c.quotes, c.first_chapter, c.name)))
