"""A voice for every main character without work: a persona per character, voices picked by it.

A persona is a gender and an age guessed from the book (honorifics in the name, the pronouns
right after it in the narration) and a short description built from them. Voices come from the
model's own speakers or presets, whose gender and age the catalog records (``speaker_traits``);
on a voice-design model each character gets a described voice; on a clone model each gets a
clip designed from the description (Qwen3-TTS VoiceDesign renders a reference line, see
:mod:`omni_web.cast.design`), saved in the voice library with its transcript. Main characters
(most lines first) get distinct voices, none the narrator's; the rest share the dialogue voice.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from omni_web.book import Book
from omni_web.cast.characters import Character
from omni_web.cast.names import Age, Gender
from omni_web.cast.voicespec import VoiceSpec
from omni_web.catalog import CatalogEntry, VoiceMode
from omni_web.voices import VoiceLibrary

__all__ = ["DESIGNED_PREFIX", "REFERENCE_LINE", "Persona", "guess_personas", "pick_voices"]

# What a designed voice says in its reference clip (and its transcript in the library).
REFERENCE_LINE = ("I remember the morning we set out: the road was long, the air was cold, "
                  "and nobody said a word until the river came into sight.")
DESIGNED_PREFIX = "cast-"
_MALE = frozenset(
    "mr sir lord king uncle father brother captain capt master prince duke count monsieur herr".split()
)
_FEMALE = frozenset(
    "mrs ms miss lady queen aunt mother sister madam mme mlle madame princess duchess".split()
)
_OLD = frozenset("old uncle aunt grandfather grandmother granny grandpa father mother".split())
_YOUNG = frozenset("little young boy girl child master kid".split())
_TIMBRES = ("warm", "bright", "husky", "deep", "crisp", "soft", "gravelly", "clear", "breathy", "rich")
_PACES = ("speaking slowly", "speaking briskly", "with a measured pace", "with a lively pace")


@dataclass(frozen=True, slots=True)
class Persona:
    """Who a character sounds like: gender ("female", "male" or ""), age ("young", "adult", "old")."""

    name: str
    gender: str
    age: str
    description: str


def _describe(gender: str, age: str, index: int) -> str:
    person = {
        ("female", "young"): "young woman",
        ("female", "old"): "old woman",
        ("male", "young"): "young man",
        ("male", "old"): "old man",
        ("female", "adult"): "woman",
        ("male", "adult"): "man",
    }
    who = person.get((gender, age), "person")
    timbre, pace = _TIMBRES[index % len(_TIMBRES)], _PACES[(index // len(_TIMBRES)) % len(_PACES)]
    article = "An" if who[0] in "aeiou" else "A"
    return f"{article} {who}'s {timbre} voice, {pace}."


def _pronoun_gender(text: str, name: str) -> str:
    """ "female"/"male" from the pronouns in the few words after the name's mentions."""
    he = she = 0
    for match in re.finditer(rf"\b{re.escape(name)}\b(.{{0,80}})", text):
        words = re.findall(r"[a-z]+", match.group(1).casefold())
        he += sum(w in ("he", "him", "his", "himself") for w in words)
        she += sum(w in ("she", "her", "hers", "herself") for w in words)
    if he > she * 1.5:
        return "male"
    if she > he * 1.5:
        return "female"
    return ""


def guess_personas(book: Book, people: Sequence[Character]) -> dict[str, Persona]:
    """A persona for each character, from honorifics, then pronouns near the name."""
    text = "\n".join(block.text for chapter in book.chapters for block in chapter.blocks)
    found: dict[str, Persona] = {}
    for index, person in enumerate(people):
        words = {w.rstrip(".").casefold() for w in person.name.split()}
        # The character record's own guesses first (pronouns and titles across the book).
        gender = (
            person.gender.value
            if person.gender is not Gender.UNKNOWN
            else (
                "male"
                if words & _MALE
                else "female"
                if words & _FEMALE
                else _pronoun_gender(text, person.name)
            )
        )
        age = (
            "old"
            if words & _OLD
            else "young"
            if words & _YOUNG
            else ({Age.CHILD: "young", Age.YOUNG: "young", Age.OLD: "old"}.get(person.age) or "adult")
        )
        found[person.name] = Persona(person.name, gender, age, _describe(gender, age, index))
    return found


def _score(persona: Persona, gender: str, age: str) -> int:
    return (2 if persona.gender and persona.gender == gender else 0) + (1 if persona.age == age else 0)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")[:40] or "voice"


def pick_voices(
    personas: Iterable[Persona],
    entry: CatalogEntry,
    library: VoiceLibrary,
    *,
    book_key: str,
    taken: Iterable[str] = (),
    narrator: str | None = None,
    limit: int | None = None,
) -> dict[str, VoiceSpec]:
    """A distinct voice for each persona, in the order given (main characters first).

    ``taken``: voice names (or clip names) already used by the cast; ``narrator``: the narrator's
    voice name, never given to a character. Speakers and presets run out: the rest are left out
    (they share the dialogue voice). On a clone model each gets a designed clip
    (``VoiceSpec(clone=…, design=…)``, rendered before the book by :mod:`omni_web.cast.design`);
    ``book_key`` keeps two books' designed clips apart.
    """
    people = list(personas)[:limit] if limit is not None else list(personas)
    used = {name.casefold() for name in taken} | ({narrator.casefold()} if narrator else set())
    picked: dict[str, VoiceSpec] = {}
    if entry.voice_mode is VoiceMode.INSTRUCTIONS:
        return {p.name: VoiceSpec(instructions=p.description) for p in people}
    if entry.voice_mode in (VoiceMode.BUILTIN_SPEAKERS, VoiceMode.PRESET_VOICES):
        pool = [trait for trait in entry.speaker_traits if trait[0].casefold() not in used]
        cast = people[: len(pool)]  # the main characters, as many as there are voices
        # Best fits first across the whole cast, so a late "Uncle" still finds the old voice.
        pairs = sorted(
            (
                (-_score(p, t[1], t[2]), rank, order, p.name, t[0])
                for rank, p in enumerate(cast)
                for order, t in enumerate(pool)
            )
        )
        given: set[str] = set()
        for _, _, _, person, voice in pairs:
            if person not in picked and voice not in given:
                picked[person] = VoiceSpec(name=voice)
                given.add(voice)
        return picked
    if entry.can_clone:
        for persona in people:
            clip = f"{DESIGNED_PREFIX}{book_key}-{_slug(persona.name)}"
            if clip.casefold() in used:
                continue
            saved = library.find(clip)
            picked[persona.name] = VoiceSpec(
                clone=clip,
                transcript=saved.transcript if saved else REFERENCE_LINE,
                design=persona.description,
            )
    return picked
