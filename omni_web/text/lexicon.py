"""The pronunciation lexicon: written form -> spoken form, as the user wants it said.

An entry matches whole words by default ("Ron" never changes "Ronald") and is case-aware: an
entry written with a capital ("Hermione") matches that spelling and its all-caps form, one written
in lower case ("gaol") matches any case and keeps a capital where the book had one ("Gaol" ->
"Jail"). ``case: exact`` and ``case: ignore`` override that; ``regex: true`` makes the written
form a Python regular expression (the spoken form may use ``\\1`` groups). A book's entries win
over the global ones for the same written form.
"""

from __future__ import annotations

import enum
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from omni_web.errors import LexiconError
from omni_web.text.rules import capitalise_like

__all__ = ["CaseRule", "Lexicon", "LexiconEntry", "Pronouncer"]

# The book text is cleaned before the lexicon sees it (typographic quotes straightened), so
# entries are cleaned the same way.
_CLEAN = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})


def _clean(text: str) -> str:
    return unicodedata.normalize("NFC", text).translate(_CLEAN).strip()


class CaseRule(enum.StrEnum):
    """How an entry's letter case is matched."""

    AUTO = "auto"  # capitalised entry: that spelling (and ALL CAPS); lower-case entry: any case
    EXACT = "exact"  # only exactly as written
    IGNORE = "ignore"  # any case, spoken form used as written


@dataclass(frozen=True, slots=True)
class LexiconEntry:
    """One pronunciation: ``written`` in the book is sent as ``spoken``."""

    written: str
    spoken: str
    regex: bool = False
    whole_word: bool = True
    case: CaseRule = CaseRule.AUTO
    note: str = ""

    def validated(self) -> LexiconEntry:
        """A cleaned copy; raise LexiconError when the entry cannot be used."""
        written, spoken = _clean(self.written) if not self.regex else self.written.strip(), _clean(self.spoken)
        if not written:
            raise LexiconError("A lexicon entry needs a written form (the word as the book spells it).")
        try:
            case = CaseRule(self.case)
        except ValueError:
            raise LexiconError(f"Lexicon entry '{written}': case must be auto, exact or ignore.") from None
        entry = replace(self, written=written, spoken=spoken, case=case)
        if entry.regex:
            try:
                compiled = re.compile(written)
                _check_group_refs(compiled, entry.spoken)
            except re.error as exc:
                raise LexiconError(
                    f"Lexicon entry '{written}' is not a valid regular expression ({exc}). Fix it, or "
                    "untick 'regular expression' to match the text literally."
                ) from None
            if compiled.search(""):
                raise LexiconError(f"Lexicon entry '{written}' matches empty text; it would change every gap.")
        return entry

    @property
    def key(self) -> str:
        """What makes two entries the same entry: the written form, case-folded unless exact."""
        return self.written if self.case is CaseRule.EXACT or self.regex else self.written.casefold()

    def to_dict(self) -> dict[str, Any]:
        """Plain YAML: the written and spoken forms, and each option that differs from its default."""
        data: dict[str, Any] = {"written": self.written, "spoken": self.spoken}
        if self.regex:
            data["regex"] = True
        if not self.whole_word:
            data["whole_word"] = False
        if self.case is not CaseRule.AUTO:
            data["case"] = self.case.value
        if self.note:
            data["note"] = self.note
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LexiconEntry:
        """Inverse of :meth:`to_dict`; raises LexiconError for a malformed item."""
        if not isinstance(data, Mapping) or "written" not in data:
            raise LexiconError(f"A lexicon entry must have 'written' and 'spoken' keys, not {data!r}.")
        return cls(
            written=str(data["written"] or ""),
            spoken=str(data.get("spoken") or ""),
            regex=bool(data.get("regex", False)),
            whole_word=bool(data.get("whole_word", True)),
            case=str(data.get("case") or "auto"),  # type: ignore[arg-type]  # validated() converts
            note=str(data.get("note") or ""),
        ).validated()


def _check_group_refs(compiled: re.Pattern[str], spoken: str) -> None:
    for ref in re.findall(r"\\(\d+)|\\g<(\w+)>", spoken):
        number, name = ref
        if number and int(number) > compiled.groups:
            raise re.error(f"the spoken form refers to group {number}, which the pattern lacks")
        if name and not name.isdigit() and name not in compiled.groupindex:
            raise re.error(f"the spoken form refers to group '{name}', which the pattern lacks")


@dataclass(frozen=True, slots=True)
class Lexicon:
    """An ordered set of entries, one per :attr:`LexiconEntry.key`."""

    entries: tuple[LexiconEntry, ...] = ()

    def __len__(self) -> int:
        return len(self.entries)

    def find(self, written: str) -> LexiconEntry | None:
        """The entry for a written form: an exact match first, else a case-insensitive one."""
        cleaned = _clean(written)
        for entry in self.entries:
            if entry.written == cleaned:
                return entry
        folded = cleaned.casefold()
        return next((e for e in self.entries if e.key == folded), None)

    def with_entry(self, entry: LexiconEntry) -> Lexicon:
        """A lexicon with ``entry`` added, or replacing the entry with the same key in place."""
        entry = entry.validated()
        entries = list(self.entries)
        for position, old in enumerate(entries):
            if old.key == entry.key:
                entries[position] = entry
                return Lexicon(tuple(entries))
        return Lexicon((*entries, entry))

    def merged(self, entries: Iterable[LexiconEntry]) -> tuple[Lexicon, int, int]:
        """Add or replace several entries: (new lexicon, added count, replaced count)."""
        lexicon, added, replaced = self, 0, 0
        for entry in entries:
            before = len(lexicon)
            lexicon = lexicon.with_entry(entry)
            added, replaced = (added + 1, replaced) if len(lexicon) > before else (added, replaced + 1)
        return lexicon, added, replaced

    def without(self, written: str) -> Lexicon:
        """A lexicon without the entry for ``written``; raise LexiconError when there is none."""
        entry = self.find(written)
        if entry is None:
            raise LexiconError(f"There is no lexicon entry for '{written}'. List them with: lexicon list")
        return Lexicon(tuple(e for e in self.entries if e is not entry))


@dataclass(frozen=True, slots=True)
class _Plain:
    """The literal entries compiled into one alternation, matched in a single pass."""

    pattern: re.Pattern[str] | None
    exact: Mapping[str, LexiconEntry] = field(default_factory=dict)  # matched spelling -> entry
    folded: Mapping[str, LexiconEntry] = field(default_factory=dict)  # casefolded -> case-blind entry


def _literal(entry: LexiconEntry) -> tuple[str, list[str], bool]:
    """(pattern, exact spellings, case-blind) for one literal entry."""
    written = entry.written
    blind = entry.case is CaseRule.IGNORE or (entry.case is CaseRule.AUTO and written == written.lower())
    spellings = [written] if entry.case is CaseRule.EXACT or blind else list(dict.fromkeys([written, written.upper()]))
    body = "|".join(re.escape(s) for s in spellings)
    if blind:
        body = f"(?i:{re.escape(written)})"
    if entry.whole_word:
        body = ("(?<!\\w)" if re.match(r"\w", written) else "") + f"(?:{body})" + ("(?!\\w)" if re.search(r"\w$", written) else "")
    return body, spellings if not blind else [], blind


class Pronouncer:
    """The merged global and book lexicons, compiled once, applied to any text.

    Literal entries run in one pass, longest written form first ("New York" before "York"), so a
    spoken form is never rewritten by another entry; regular-expression entries then run in order,
    the book's first.
    """

    def __init__(self, global_lexicon: Lexicon = Lexicon(), book_lexicon: Lexicon = Lexicon()) -> None:
        book_keys = {entry.key for entry in book_lexicon.entries}
        chosen = [*book_lexicon.entries, *(e for e in global_lexicon.entries if e.key not in book_keys)]
        self.entries: tuple[LexiconEntry, ...] = tuple(chosen)
        literals = sorted((e for e in chosen if not e.regex), key=lambda e: len(e.written), reverse=True)
        exact: dict[str, LexiconEntry] = {}
        folded: dict[str, LexiconEntry] = {}
        bodies = []
        for entry in literals:
            body, spellings, blind = _literal(entry)
            bodies.append(body)
            for spelling in spellings:
                exact.setdefault(spelling, entry)
            if blind:
                folded.setdefault(entry.written.casefold(), entry)
        self._plain = _Plain(re.compile("|".join(bodies)) if bodies else None, exact, folded)
        self._regexes = tuple(
            (re.compile(e.written, re.IGNORECASE if e.case is CaseRule.IGNORE or (
                e.case is CaseRule.AUTO and e.written == e.written.lower()) else 0), e)
            for e in chosen if e.regex
        )

    def __bool__(self) -> bool:
        return bool(self.entries)

    def apply(self, text: str) -> str:
        """``text`` with every entry's written form replaced by its spoken form."""
        plain = self._plain
        if plain.pattern is not None:
            text = plain.pattern.sub(self._replace_literal, text)
        for pattern, entry in self._regexes:
            text = pattern.sub(entry.spoken, text)
        return text

    def _replace_literal(self, match: re.Match[str]) -> str:
        found = match.group(0)
        entry = self._plain.exact.get(found)
        if entry is not None:
            return entry.spoken
        entry = self._plain.folded[found.casefold()]
        return entry.spoken if entry.case is CaseRule.IGNORE else capitalise_like(found, entry.spoken)

    def matching(self, text: str) -> list[LexiconEntry]:
        """The entries that change ``text`` (for "which chunks does this entry touch")."""
        return [entry for entry in self.entries if Pronouncer(Lexicon((entry,))).apply(text) != text]
