"""The LLM's aliases: which characters the rules listed twice are one person.

The rules join what the text itself links ("Darcy", "Mr. Darcy", "Fitzwilliam Darcy"); what takes
a reader's knowledge they leave apart: a married name ("Isabella", "Mrs. John Knightley"), a
nickname ("the Dodger", "Jack Dawkins"), an epithet ("the Collector", "Mr. Turton"), a disguise.
One request sends the cast (each character's names, gender, lines and where the book first names
them); the endpoint answers with **groups of ids only**, ``{"same": [["C2", "C9"]]}``, read as
strictly as the labeller's labels. The groups become merges in the cast's edits, so the cast
screen shows them and the user can split any of them again; the user's own choices win (a name
they split off or hid is never merged, a character they merged into or renamed keeps its name),
and a group that mixes a man and a woman, or names the first-person narrator, is refused. A
malformed answer or a failed request changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from omni_web.book import Book
from omni_web.cast.characters import Character
from omni_web.cast.edits import CastEdits
from omni_web.cast.names import Gender
from omni_web.errors import LlmError, LlmUnusableAnswer
from omni_web.llm import ChatClient, LlmUsage, json_in_answer

__all__ = ["MAX_LISTED", "AliasRun", "alias_prompt", "join_aliases", "parse_aliases"]

_SYSTEM = (
    "You help cast an audiobook. The characters listed were found by rules that keep apart names "
    "the text never links, so one person may be listed twice: a maiden and a married name, a given "
    "name and a surname, a nickname, an epithet or office (the Collector), an alias or a disguise. "
    "Group the ids of characters that are the same person. Group only where you are sure; leave "
    'everyone else out. Answer with one JSON object and nothing else: {"same": [["C2", "C9"]]} '
    '(or {"same": []} when no one is listed twice).'
)
_MENTION_CHARS = 200  # the sentence where the book first names a character, cut to this
# Most lines first: the corpus's novels list 8-50 characters (about 2,900 tokens at most); a cast
# of hundreds would not fit a small model's context.
MAX_LISTED = 150
_SAMPLE_CHARS = 120


@dataclass(frozen=True, slots=True)
class AliasRun:
    """What the pass gave: the edits with its merges, the merges made (name, into), and the cost."""

    edits: CastEdits
    joined: tuple[tuple[str, str], ...]
    usage: LlmUsage
    error: str = ""


def _first_mention(text: str, character: Character) -> str:
    """The sentence around the earliest place the book writes one of the character's names."""
    found = [
        m.start()
        for name in (character.name, *character.aliases)
        if (m := re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text))
    ]
    if not found:
        return ""
    at = min(found)
    start = max(text.rfind(". ", 0, at) + 2, text.rfind("\n", 0, at) + 1, at - _MENTION_CHARS // 2)
    end = min(e for e in (text.find(". ", at), text.find("\n", at), len(text)) if e >= 0)
    return " ".join(text[start : end + 1].split())[:_MENTION_CHARS]


def alias_prompt(book: Book, people: Sequence[Character]) -> tuple[str, str]:
    """The system and user messages: the book, then one line per character."""
    text = "\n".join(block.text for chapter in book.chapters for block in chapter.blocks)
    authors = ", ".join(book.metadata.authors) or "unknown"
    ids = {person.name: f"C{n}" for n, person in enumerate(people, start=1)}
    lines = []
    for n, person in enumerate(people, start=1):
        also = f"; also called {', '.join(person.aliases[:6])}" if person.aliases else ""
        gender = f"; {person.gender.value}" if person.gender is not Gender.UNKNOWN else ""
        mention = _first_mention(text, person)
        # The rules' own hints ("Miss Lucas": Charlotte or Maria?), for the model to settle.
        maybe = [ids[name] for name in person.maybe if name in ids]
        lines.append(
            f"C{n}: {person.name}{also}{gender}; {person.quotes} lines"
            + (f"; may be {' or '.join(maybe)}" if maybe else "")
            + (f"\n    first named: {mention}" if mention else "")
            + f"\n    says: “{person.sample[:_SAMPLE_CHARS]}”"
        )
    user = f"Book: {book.metadata.title or 'untitled'} by {authors}\n\nCharacters:\n" + "\n".join(lines)
    return _SYSTEM, user


def parse_aliases(answer: str, people: Sequence[Character]) -> list[list[Character]]:
    """The groups of one person in an answer, each of two or more listed characters (by id, or by
    name as listed). A character in two groups, an id or name not on the list and a group of one
    are dropped.

    Raises:
        LlmUnusableAnswer: no JSON object, or none with a "same" list.
    """
    data = json_in_answer(answer)
    groups = data.get("same") if isinstance(data, dict) else None
    if not isinstance(groups, list):
        raise LlmUnusableAnswer('The LLM\'s answer has no "same" list.')
    found: list[list[Character]] = []
    for group in groups:
        members = {_listed(item, people) for item in (group if isinstance(group, list) else [])} - {None}
        if len(members) > 1:
            found.append([people[n] for n in sorted(members)])
    twice = {p.name for group in found for p in group if sum(p in g for g in found) > 1}
    return [group for group in found if not twice & {p.name for p in group}]


def _listed(item: object, people: Sequence[Character]) -> int | None:
    """The list index an answer's item means: an id ("C3"), or a listed name as some models answer."""
    text = str(item).strip()
    match = re.fullmatch(r"[Cc](\d+)", text)
    if match:
        return int(match.group(1)) - 1 if 1 <= int(match.group(1)) <= len(people) else None
    return next((n for n, p in enumerate(people) if p.name.casefold() == text.casefold()), None)


def _refused(group: Sequence[Character], edits: CastEdits) -> bool:
    """A group the user's choices or the book's genders rule out: a name the user split off or
    hid, a man with a woman, the narrator."""
    mine = {n.casefold() for n in (*edits.splits, *edits.hidden)}
    genders = {p.gender for p in group} - {Gender.UNKNOWN}
    return (
        len(genders) > 1
        or any(p.narrator or p.hidden for p in group)
        or any(name.casefold() in mine for p in group for name in (p.name, *p.aliases))
    )


def _main(group: Sequence[Character], edits: CastEdits) -> Character:
    """The character the others join: one the user merged into or renamed keeps its name, else the
    one with the most lines."""
    chosen = {n.casefold() for n in (*edits.merges.values(), *edits.renames.values())}
    return max(group, key=lambda p: (p.name.casefold() in chosen, p.quotes, p.words, p.name))


def join_aliases(
    book: Book, client: ChatClient, people: Sequence[Character], edits: CastEdits
) -> AliasRun:
    """Ask the endpoint which of ``people`` are one person and merge them in ``edits``.

    Each group joins the character with the most lines. A request that fails or an answer that
    is not understood leaves the edits as they were (``error`` says why).
    """
    people = sorted(people, key=lambda p: -p.quotes)[:MAX_LISTED]
    if len(people) < 2:
        return AliasRun(edits, (), LlmUsage())
    system, user = alias_prompt(book, people)
    try:
        answer = client.complete(system, user)
    except LlmError as exc:
        return AliasRun(edits, (), LlmUsage(failures=1), str(exc))
    try:
        groups = parse_aliases(answer.text, people)
    except LlmUnusableAnswer as exc:
        return AliasRun(edits, (), answer.usage.plus(LlmUsage(failures=1)), str(exc))
    joined: list[tuple[str, str]] = []
    for group in groups:
        if _refused(group, edits):
            continue
        main = _main(group, edits)
        others = [p.name for p in group if p is not main]
        edits = edits.merge(others, main.name)
        joined += [(name, main.name) for name in others]
    return AliasRun(edits, tuple(joined), answer.usage)
