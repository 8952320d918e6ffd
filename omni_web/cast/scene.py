"""What the reader of a chapter remembers between quotes: who was mentioned and when, who is
talking, who was spoken to; and whom a "he" or "she" next to a quote means."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from omni_web.cast.names import Gender
from omni_web.cast.roster import Roster
from omni_web.cast.tags import is_speech_verb

__all__ = ["PRONOUN_CONFIDENCE", "Referent", "Scene"]

# A pronoun tag by where its character was found (named in the paragraph, just spoken to, named
# since the last speech, talking, mentioned before) and among how many of that gender (1, 2, 3+).
PRONOUN_CONFIDENCE = {
    ("local", 1): 0.93,  # 93 %
    ("local", 2): 0.74,  # 74 %
    ("local", 3): 0.71,  # 71 %
    ("spoken-to", 1): 0.9,  # 100 % (17 lines)
    ("spoken-to", 2): 0.9,  # 95 %
    ("spoken-to", 3): 0.66,  # 66 %
    ("since", 1): 0.92,  # 92 %
    ("since", 2): 0.79,  # 79 %
    ("since", 3): 0.64,  # 64 %
    ("talking", 1): 0.72,  # 72 %
    ("talking", 2): 0.68,  # 68 %
    ("talking", 3): 0.46,  # 46 %
    ("recent", 1): 0.65,  # 65 % (named in the last three paragraphs)
    ("recent", 2): 0.62,  # 62 %
    ("recent", 3): 0.62,  # 62 %
    ("older", 1): 0.31,  # 31 % (named before that)
    ("older", 2): 0.5,  # 51 %
    ("older", 3): 0.32,  # 32 %
    ("again", 1): 0.8,  # 82 % (the one who just spoke, no one else of the gender fresh)
    ("again", 2): 0.8,  # 82 %
    ("again", 3): 0.72,  # 72 %
}
_FRESH_PARAGRAPHS = 3  # a character named this many paragraphs back is still in mind
_SCENE_WORDS = 150  # narration this long between quotes ends the exchange
_NARRATOR_ACTS = re.compile(r"\bI\b")  # a first-person narrator in the narration ("I went up-stairs")
# A paragraph of narration ending like this leads into the quote that opens the next one
# ("Captain Wentworth, exerting himself, said--", "Mrs. Honeychurch exclaimed:").
_LEADS_INTO_QUOTE = re.compile(r"(?::|--|[\u2014\u2013])\s*_?\s*$")


def _ends_in_speech_verb(text: str) -> bool:
    """Whether narration ends on a speech verb and a comma ("…, immediately said,")."""
    match = re.search(r"([^\W\d_]+)\s*,\s*_?\s*$", text)
    return match is not None and is_speech_verb(match.group(1))


class Scene:
    """What the reader of a chapter remembers: who was mentioned, who talks, who was spoken to."""

    def __init__(self, roster: Roster | None, known: set[str], resolve: Callable[[str], str | None]) -> None:
        self.roster = roster
        self.resolve = roster.resolve if roster is not None else resolve
        forms = set(roster.canonical) if roster is not None and roster.canonical else set(known)
        forms = {f for f in forms if f and f[0].isupper() and len(f) > 1}
        self.forms_re = (
            re.compile(
                r"(?<![\w’'])("
                + "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
                + r")(?![\w’'])"
            )
            if forms
            else None
        )
        self.known = known
        self.recent: list[str] = []
        self.paragraphs = 0  # paragraphs read so far
        self.seen: dict[str, int] = {}  # the paragraph each character was last named in
        self.exchange: list[str] = []
        self.turns = 0
        self.previous: tuple[str, float] | None = None  # the last quote's speaker and confidence
        self.addressee: str | None = None
        self.narration_words = 0
        self.just_spoke: str | None = None  # the speaker of the paragraph right before, if it spoke
        self.since_spoken: list[str] = []  # characters the narration named since the last speech
        self.lead = ""  # the paragraph right before, narration that ends leading into a quote ("… said:")

    def mentions(self, text: str) -> list[str]:
        """Characters named in ``text``, in order."""
        if self.forms_re is None:
            return []
        found = []
        for match in self.forms_re.finditer(text):
            name = self.resolve(match.group(1))
            if name is not None:
                found.append(name)
        return found

    def gender(self, name: str) -> Gender:
        return self.roster.gender(name) if self.roster is not None else Gender.UNKNOWN

    def remember(self, names: list[str]) -> None:
        self.recent.extend(names)
        self.seen.update((name, self.paragraphs) for name in names)

    def narrated(self, text: str) -> None:
        """A paragraph of narration only: its names are remembered; a long stretch ends the scene,
        and a first-person narrator with one new person named starts a talk with them."""
        named = self.mentions(text)
        self.paragraphs += 1
        self.remember(named)
        self.since_spoken.extend(named)
        self.narration_words += len(text.split())
        self.just_spoke = None
        self.lead = text if _LEADS_INTO_QUOTE.search(text) or _ends_in_speech_verb(text) else ""
        if self.narration_words > _SCENE_WORDS:
            self.exchange, self.addressee, self.turns, self.previous = [], None, 0, None
        if self.roster is None or not self.roster.first_person or not _NARRATOR_ACTS.search(text):
            return
        narrator = self.roster.narrator
        others = set(named) - {narrator}
        if len(others) == 1 and others.isdisjoint(self.exchange[-2:]):
            # "I went up-stairs. Bill was in his room": the narrator talks with Bill now, and as
            # after any beat of narration the other one speaks first.
            self.exchange, self.addressee, self.turns, self.previous = [*others, narrator], None, 0, None

    def spoke(self, speaker: str | None, addressee: str | None, *, tagged: bool) -> None:
        """A paragraph of speech ended: its speaker takes the turn."""
        self.narration_words = 0
        self.paragraphs += 1
        if speaker is not None:
            if speaker in self.exchange:
                self.exchange.remove(speaker)
            self.exchange.append(speaker)
            self.remember([speaker])
        self.turns = 0 if tagged else self.turns + 1
        self.addressee = addressee if addressee != speaker else None
        self.just_spoke = speaker
        self.since_spoken = []
        self.lead = ""

    @property
    def last_speaker(self) -> str | None:
        return self.exchange[-1] if self.exchange else None

    def pronoun(
        self, gender: Gender, local: list[str], spoken_to: frozenset[str] = frozenset(), *, again: bool = False
    ) -> Referent | None:
        """The character a "he"/"she" next to a quote means, where it was found, and how many
        characters of that gender were in mind. Candidates, in order: those named in the paragraph
        (last first), the one just spoken to, those the narration has named since the last speech,
        the others of the conversation, then whoever was mentioned last; never the one who just
        spoke unless named here, or, for a pronoun tag (``again``), where everyone else of the
        gender was named long ago; never the one the quote calls by name. Characters a tag names as
        speaking somewhere in the chapter come first (the place or thing a name was mistaken for
        never speaks)."""
        if gender is Gender.UNKNOWN:
            return None
        sources = (
            ("local", reversed(local)),
            ("spoken-to", [self.addressee] if self.addressee is not None else []),
            ("since", reversed(self.since_spoken)),
            ("talking", reversed(self.exchange[-3:])),
            ("recent", reversed(self.recent[-30:])),
        )
        candidates: dict[str, str] = {}
        for source, names in sources:
            for name in names:
                if name in candidates or name in spoken_to or self.gender(name) is not gender:
                    continue
                if source != "local" and name == self.just_spoke:
                    continue
                fresh = source != "recent" or self.paragraphs - self.seen.get(name, -99) <= _FRESH_PARAGRAPHS
                candidates[name] = source if fresh else "older"
        # No one of the gender is fresh in mind: "she said" is the one who just spoke, again
        # ("“…,” Brett said. / She looked at me. “…,” she said.").
        last = self.just_spoke
        if (
            again
            and last is not None
            and last not in spoken_to
            and self.gender(last) is gender
            and all(source == "older" for source in candidates.values())
        ):
            return Referent(last, "again", len(candidates) + 1)
        if not candidates:
            return None
        name = next((n for n in candidates if n in self.known), next(iter(candidates)))
        return Referent(name, candidates[name], len(candidates))


@dataclass(frozen=True, slots=True)
class Referent:
    """The character a pronoun was resolved to: where in the reader's memory, among how many."""

    name: str
    source: str
    among: int
