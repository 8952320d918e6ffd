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
from dataclasses import dataclass, replace
from typing import Any

from omni_web.errors import LexiconError
from omni_web.text.case import capitalise_like

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
        written, spoken = (
            _clean(self.written) if not self.regex else self.written.strip(),
            _clean(self.spoken),
        )
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
                raise LexiconError(
                    f"Lexicon entry '{written}' matches empty text; it would change every gap."
                )
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


def _accepts(entry: LexiconEntry, found: str) -> bool:
    """Whether the text ``found`` (matched ignoring case) matches ``entry`` under its case rule."""
    written = entry.written
    if entry.case is CaseRule.EXACT:
        return found == written
    if entry.case is CaseRule.IGNORE or written == written.lower():
        return True
    return found in (written, written.upper())  # "Hermione" and "HERMIONE", not "hermione"


def _trie_pattern(words: list[str]) -> str:
    """One regex for many literal words, shaped as a trie (shared prefixes), preferring the longest."""
    trie: dict[str, dict] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if "" in node:  # a shorter word ends here: the longer ones are tried first
            body = f"(?:{body})?"
        return body

    return emit(trie)


class _Literals:
    """The literal entries as one case-blind pass; each match is checked against its entry's case rule."""

    def __init__(self, entries: list[LexiconEntry]) -> None:
        self.by_key: dict[str, list[LexiconEntry]] = {}
        groups: dict[tuple[bool, bool], list[str]] = {}  # (boundary before, boundary after) -> words
        for entry in entries:
            key = entry.written.lower()
            self.by_key.setdefault(key, []).append(entry)
            before = entry.whole_word and bool(re.match(r"\w", entry.written))
            after = entry.whole_word and bool(re.search(r"\w$", entry.written))
            groups.setdefault((before, after), []).append(key)
        parts = []
        for (before, after), words in sorted(groups.items(), reverse=True):
            body = _trie_pattern(sorted(set(words)))
            parts.append(("(?<!\\w)" if before else "") + f"(?:{body})" + ("(?!\\w)" if after else ""))
        self.pattern = re.compile("|".join(parts), re.IGNORECASE) if parts else None

    def replace(self, match: re.Match[str]) -> str:
        found = match.group(0)
        for entry in self.by_key.get(found.lower(), ()):
            if _accepts(entry, found):
                if entry.case is CaseRule.AUTO and entry.written == entry.written.lower():
                    return capitalise_like(found, entry.spoken)
                return entry.spoken
        return found


class Pronouncer:
    """The merged global and book lexicons, compiled once, applied to any text.

    Literal entries run in one pass, the longest written form first where several start at one
    place ("New York" before "York"), so a spoken form is never rewritten by another entry;
    regular-expression entries then run in order, the book's first.
    """

    def __init__(self, global_lexicon: Lexicon = Lexicon(), book_lexicon: Lexicon = Lexicon()) -> None:
        book_keys = {entry.key for entry in book_lexicon.entries}
        chosen = [*book_lexicon.entries, *(e for e in global_lexicon.entries if e.key not in book_keys)]
        self.entries: tuple[LexiconEntry, ...] = tuple(chosen)
        self._literals = _Literals([e for e in chosen if not e.regex])
        self._regexes = tuple(
            (
                re.compile(
                    e.written,
                    re.IGNORECASE
                    if e.case is CaseRule.IGNORE
                    or (e.case is CaseRule.AUTO and e.written == e.written.lower())
                    else 0,
                ),
                e,
            )
            for e in chosen
            if e.regex
        )

    def __bool__(self) -> bool:
        return bool(self.entries)

    def apply(self, text: str) -> str:
        """``text`` with every entry's written form replaced by its spoken form."""
        literals = self._literals
        if literals.pattern is not None:
            text = literals.pattern.sub(literals.replace, text)
        for pattern, entry in self._regexes:
            text = pattern.sub(entry.spoken, text)
        return text
