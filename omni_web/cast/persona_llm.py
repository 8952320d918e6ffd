"""Personas from the LLM: gender, age and a one-line voice description per main character.

One request for the whole main cast, with a sample line of each; the answer is JSON only and is
read as strictly as the labeller's (ids from the list, known words). A character it says nothing
usable about, or an endpoint that fails, keeps the persona the book's words give
(:func:`omni_web.cast.casting.guess_personas`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from omni_web.book import Book
from omni_web.cast.casting import Persona, guess_personas
from omni_web.cast.characters import Character
from omni_web.errors import LlmError, LlmUnusableAnswer
from omni_web.llm import ChatClient, json_in_answer
from omni_web.settings import Settings

__all__ = ["describer", "llm_personas"]

_SYSTEM = (
    "You cast an audiobook. For every character listed, give their gender, age and a one-sentence "
    "description of their speaking voice for a voice designer (timbre, pitch, pace, accent; no names). "
    'Answer with one JSON object and nothing else: {"characters": [{"id": "C1", "gender": "female", '
    '"age": "young", "voice": "A bright, quick young woman\'s voice."}]}. gender: female, male or unknown. '
    "age: young, adult or old."
)
_GENDERS = {"female", "male"}
_AGES = {"young", "adult", "old"}


def _prompt(book: Book, people: Sequence[Character]) -> str:
    authors = ", ".join(book.metadata.authors) or "unknown"
    lines = [f"C{n}: {p.name}: “{p.sample[:160]}”" for n, p in enumerate(people, start=1)]
    return f"Book: {book.metadata.title} by {authors}\n\nCharacters (with one of their lines):\n" + "\n".join(
        lines
    )


def _parsed(text: str) -> list[dict]:
    try:
        data = json_in_answer(text)
    except LlmUnusableAnswer:
        return []
    items = data.get("characters") if isinstance(data, dict) else None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def llm_personas(book: Book, people: Sequence[Character], client: ChatClient) -> dict[str, Persona]:
    """A persona for each character: the LLM's where it gave a usable one, else the book's guess."""
    guessed = guess_personas(book, people)
    if not people:
        return guessed
    try:
        answer = client.complete(_SYSTEM, _prompt(book, people))
    except LlmError:
        return guessed  # the rules' personas; the cast goes on without the LLM
    found = dict(guessed)
    for item in _parsed(answer.text):
        match = re.fullmatch(r"[Cc](\d+)", str(item.get("id") or "").strip())
        if not match or not 1 <= int(match.group(1)) <= len(people):
            continue
        name = people[int(match.group(1)) - 1].name
        old = guessed[name]
        gender = str(item.get("gender") or "").casefold()
        age = str(item.get("age") or "").casefold()
        voice = " ".join(str(item.get("voice") or "").split())[:300]
        found[name] = Persona(
            name,
            gender if gender in _GENDERS else old.gender,
            age if age in _AGES else old.age,
            voice or old.description,
        )
    return found


def describer(settings: Settings) -> Callable[[Book, Sequence[Character]], dict[str, Persona]] | None:
    """Personas from the LLM set in Settings; None when none is set (the book's words decide)."""
    if not settings.llm_url.strip():
        return None
    client = ChatClient.from_settings(settings)
    return lambda book, people: llm_personas(book, people, client)
