"""The user's corrections to a book's characters: merge, split, rename, hide.

They are saved with the book's cast (:mod:`.store`) and laid over the roster the book gives
(:meth:`CastEdits.apply`), so they hold however the rules change. Names are matched without
regard to case. A merge points any form of one character at another ("Lizzy" -> "Elizabeth"); a
split makes a form its own character again ("Bennet" out of "Mrs. Bennet"); a rename gives a
character the name the cast shows and maps voices by; a hidden name is no character at all (a
word the rules took for a name): its quotes are read by the dialogue voice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from omni_web.cast.roster import Roster
from omni_web.errors import CastError

__all__ = ["CastEdits"]


@dataclass(frozen=True, slots=True)
class CastEdits:
    """Merges (form -> character), renames (name -> new name), split forms and hidden names."""

    merges: Mapping[str, str] = field(default_factory=dict)
    renames: Mapping[str, str] = field(default_factory=dict)
    splits: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """True when nothing was edited."""
        return not (self.merges or self.renames or self.splits or self.hidden)

    def merge(self, names: Sequence[str], into: str) -> CastEdits:
        """``names`` (any of their forms) are the character ``into``.

        Raises:
            CastError: no character to merge into, or no name other than it.
        """
        target = into.strip()
        if not target:
            raise CastError("Say which character to merge into, e.g. --merge 'Lizzy=Elizabeth'.")
        if all(name.strip().casefold() in ("", target.casefold()) for name in names):
            raise CastError(f"{target} is that character already: give the other name it goes by.")
        merges = {k: v for k, v in self.merges.items() if k.casefold() not in {n.casefold() for n in names}}
        for name in names:
            if name.strip() and name.strip().casefold() != target.casefold():
                merges[name.strip()] = target
        splits = tuple(s for s in self.splits if s.casefold() not in {n.casefold() for n in names})
        return replace(self, merges=dict(sorted(merges.items())), splits=splits)

    def split(self, form: str) -> CastEdits:
        """``form`` is a character of its own, not one of another's names."""
        merges = {k: v for k, v in self.merges.items() if k.casefold() != form.casefold()}
        splits = tuple(sorted({*self.splits, form.strip()}))
        return replace(self, merges=merges, splits=splits)

    def rename(self, name: str, new: str) -> CastEdits:
        """Show and map ``name`` as ``new``."""
        if not new.strip():
            raise CastError(f"Give {name} a new name, e.g. --rename '{name}=New Name'.")
        renames = {k: v for k, v in self.renames.items() if k.casefold() != name.casefold()}
        renames[name.strip()] = new.strip()
        return replace(self, renames=dict(sorted(renames.items())))

    def hide(self, name: str, hidden: bool = True) -> CastEdits:
        """Leave ``name`` off the cast (or bring it back)."""
        rest = {h for h in self.hidden if h.casefold() != name.casefold()}
        return replace(self, hidden=tuple(sorted(rest | ({name.strip()} if hidden else set()))))

    def apply(self, roster: Roster) -> Roster:
        """The roster with these edits laid over it."""
        if self.empty:
            return roster
        canonical = dict(roster.canonical)
        genders = dict(roster.genders)
        by_fold = {form.casefold(): form for form in canonical}
        for form in self.splits:
            key = by_fold.get(form.casefold(), form)
            rest = sorted(
                (f for f, c in canonical.items() if c == key and f != key), key=lambda f: (-len(f), f)
            )
            for other in rest:  # the split form named the group: the others keep its fullest other form
                canonical[other] = rest[0]
            canonical[key] = key
        for source, target in self.merges.items():
            form = by_fold.get(source.casefold(), source)
            old = canonical.get(form, form)
            new = canonical.get(by_fold.get(target.casefold(), target), target)
            canonical.setdefault(new, new)
            for other, character in list(canonical.items()):
                if character == old:
                    canonical[other] = new
            canonical[form] = new
        # A rename names the character any of its forms stands for ("Mr. Darcy" renames "Darcy").
        renames = {
            canonical.get(by_fold.get(k.casefold(), k), k).casefold(): v for k, v in self.renames.items()
        }
        for form, character in list(canonical.items()):
            new_name = renames.get(character.casefold())
            if new_name is not None:
                canonical[form] = new_name
                if character in genders:
                    genders.setdefault(new_name, genders[character])
        for new_name in renames.values():
            canonical.setdefault(new_name, new_name)
        hidden = frozenset(h.casefold() for h in self.hidden)
        narrator = renames.get(roster.narrator.casefold(), roster.narrator)
        return replace(roster, canonical=canonical, genders=genders, hidden=hidden, narrator=narrator)

    def to_yaml(self) -> dict[str, Any]:
        """The edits as the cast file keeps them (only what was edited)."""
        data: dict[str, Any] = {}
        if self.merges:
            data["merge"] = dict(self.merges)
        if self.renames:
            data["rename"] = dict(self.renames)
        if self.splits:
            data["split"] = list(self.splits)
        if self.hidden:
            data["hide"] = list(self.hidden)
        return data

    @classmethod
    def from_yaml(cls, value: Any, *, source: str) -> CastEdits:
        """Parse what :meth:`to_yaml` wrote; ``source`` names the file in error messages."""
        if value in (None, ""):
            return cls()
        if not isinstance(value, Mapping):
            raise CastError(f"In {source}, 'edits' should hold merge, rename, split and hide.")
        unknown = set(value) - {"merge", "rename", "split", "hide"}
        if unknown:
            raise CastError(
                f"In {source}, edits: unknown key(s) {', '.join(sorted(map(str, unknown)))}; "
                "use merge, rename, split or hide."
            )

        def pairs(key: str) -> dict[str, str]:
            found = value.get(key) or {}
            if not isinstance(found, Mapping):
                raise CastError(
                    f"In {source}, edits: {key} should map names to names (e.g. 'Lizzy: Elizabeth')."
                )
            return {str(k): str(v) for k, v in found.items()}

        def names(key: str) -> tuple[str, ...]:
            found = value.get(key) or []
            if isinstance(found, str) or not isinstance(found, Sequence):
                raise CastError(f"In {source}, edits: {key} should be a list of names.")
            return tuple(str(n) for n in found)

        return cls(pairs("merge"), pairs("rename"), names("split"), names("hide"))
