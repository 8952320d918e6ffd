"""Audiobookshelf v2.36.0's name parsing, re-implemented from its source for the fake server.

``server/utils/parsers/parseNameString.js`` splits a string of names (on ``&``, else `` and ``,
else ``;``, and on ``,`` in every case; an even list whose first piece has no space is read as
"Last, First" pairs) and runs each name through ``parseFullName.js`` (a port of
RateGravity/parse-full-name with its short lists): text in quotes, brackets or parentheses is a
nickname and dropped, titles (``Dr``, ``Captain`` …) and suffixes (``Jr``, ``2``, ``III`` …) are
dropped, the rest becomes first, middle and last name, and a name written all in one case is
re-cased. ABS shows ``first middle last``. This is what it does to every narrator and author it
reads from a folder name, an audio file's tags and ``reader.txt``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["parse_full_name", "parse_name_string"]

_SUFFIXES = ("esq", "esquire", "jr", "jnr", "sr", "snr", "2", "ii", "iii", "iv", "md", "phd", "j.d.", "ll.m.",
             "m.d.", "d.o.", "d.c.", "p.c.", "ph.d.")
_PREFIXES = (
    "ab",
    "bar",
    "bin",
    "da",
    "dal",
    "de",
    "de la",
    "del",
    "della",
    "der",
    "di",
    "du",
    "ibn",
    "l'",
    "la",
    "le",
    "san",
    "st",
    "st.",
    "ste",
    "ter",
    "van",
    "van de",
    "van der",
    "van den",
    "vel",
    "ver",
    "vere",
    "von",
)
_TITLES = (
    "dr",
    "miss",
    "mr",
    "mrs",
    "ms",
    "prof",
    "sir",
    "frau",
    "herr",
    "hr",
    "monsieur",
    "captain",
    "doctor",
    "judge",
    "officer",
    "professor",
    "ind",
    "misc",
    "mx",
)
_CONJUNCTIONS = ("&", "and", "et", "e", "of", "the", "und", "y")
_FORCE_CASE = (
    "e",
    "y",
    "av",
    "af",
    "da",
    "dal",
    "de",
    "del",
    "der",
    "di",
    "la",
    "le",
    "van",
    "der",
    "den",
    "vel",
    "von",
    "II",
    "III",
    "IV",
    "J.D.",
    "LL.M.",
    "M.D.",
    "D.O.",
    "D.C.",
    "Ph.D.",
)
_NICK = re.compile(r"\s(?:[‘’']([^‘’']+)[‘’']|[“”\"]([^“”\"]+)[“”\"]|\[([^\]]+)\]|\(([^)]+)\)),?\s")
_CJK = re.compile(r"[\u4e00-\u9fff\u3040-\u30ff\u31f0-\u31ff]")
_LABELS = ("title", "first", "middle", "last", "nick", "suffix")


@dataclass
class FullName:
    """parseFullName's result."""

    title: str = ""
    first: str = ""
    middle: str = ""
    last: str = ""
    nick: str = ""
    suffix: str = ""
    errors: list[str] = field(default_factory=list)


def _listed(part: str, names: tuple[str, ...]) -> bool:
    check = (part[:-1] if part.endswith(".") else part).lower()
    return check in names or check + "." in names


def _fix_case(name: FullName) -> None:
    forced = [w.lower() for w in _FORCE_CASE]
    for label in _LABELS:
        value = getattr(name, label)
        if not value:
            continue
        words = value.split(" ")
        for j, word in enumerate(words):
            if word.lower() in forced:
                words[j] = _FORCE_CASE[forced.index(word.lower())]
            elif len(word) == 1:
                words[j] = word.upper()
            elif (
                len(word) > 2
                and word[0] == word[0].upper()
                and word[1] == word[1].lower()
                and word[2:] == word[2:].upper()
            ):
                words[j] = word[:3] + word[3:].lower()
            elif (
                j < len(_LABELS)
                and _LABELS[j] == "suffix"
                and not word.endswith(".")
                and word.lower() == "esq"
            ):
                words[j] = word.upper() if word == word.lower() else word  # the original's quirk, kept
            else:
                words[j] = word[:1].upper() + word[1:].lower()
        setattr(name, label, " ".join(words))


def _take_listed(parts: list[str], commas: list[str | None], names: tuple[str, ...], low: int) -> list[str]:
    """Remove the parts found in ``names`` (right to left, down to index ``low``), as the original does."""
    found: list[str] = []
    for i in range(len(parts) - 1, low - 1, -1):
        if _listed(parts[i], names):
            found.insert(0, parts.pop(i))
            del commas[i + 1 if commas[i] == "," else i]
    return found


def _nicknames(text: str, name: FullName) -> str:
    found = [m.group(0) for m in _NICK.finditer(f" {text} ")]
    nicks = []
    for piece in found:
        text = f" {text} ".replace(piece, " ", 1).strip()
        nick = piece[2:-2]
        nicks.append(nick[:-1] if nick.endswith(",") else nick)
    if len(found) > 1:
        name.errors.append(f"{len(found)} nicknames found")
    name.nick = ", ".join(nicks)
    return text


def parse_full_name(text: str) -> FullName:
    """parseFullName(name) with its defaults (short lists, case fixed only for one-case input)."""
    name = FullName()
    if not text:
        return name
    text = text.strip()
    fix = text in (text.upper(), text.lower())
    text = _nicknames(text, name)
    if text.strip():
        _parse_parts(text, name)
    if fix:
        _fix_case(name)
    return name


def _parse_parts(text: str, name: FullName) -> None:
    parts: list[str] = []
    commas: list[str | None] = [None]
    for part in text.split(" "):
        comma = "," if part.endswith(",") else None
        parts.append(part[:-1] if comma else part)
        commas.append(comma)
    name.suffix = ", ".join(_take_listed(parts, commas, _SUFFIXES, 1))
    if not parts:
        return
    name.title = ", ".join(_take_listed(parts, commas, _TITLES, 0))
    if not parts:
        return
    for i in range(len(parts) - 2, -1, -1):
        if i + 1 < len(parts) and parts[i].lower() in _PREFIXES:
            parts[i : i + 2] = [f"{parts[i]} {parts[i + 1]}"]
            del commas[i + 1]
    i = len(parts) - 3
    while i >= 0:
        if parts[i + 1].lower() in _CONJUNCTIONS:
            parts[i : i + 3] = [" ".join(parts[i : i + 3])]
            del commas[i + 1 : i + 3]
            i -= 1
        i -= 1
    _last_first_middle(parts, commas, name)


def _last_first_middle(parts: list[str], commas: list[str | None], name: FullName) -> None:
    commas.pop()
    first_comma = commas.index(",") if "," in commas else -1
    remaining = sum(1 for c in commas if c is not None)
    extra: list[str] = []
    if first_comma > 1 or remaining > 1:
        for i in range(len(parts) - 1, 1, -1):
            if commas[i] != ",":
                break
            extra.insert(0, parts.pop(i))
            del commas[i]
            remaining -= 1
    if extra:
        name.suffix = ", ".join(([name.suffix] if name.suffix else []) + extra)
    if remaining > 0:
        at = commas.index(",") if "," in commas else -1
        if at:  # -1 is truthy in JS too; splice(0, -1) takes nothing
            count = max(at, 0)
            name.last = " ".join(parts[:count])
            del parts[:count]
            del commas[:count]
    else:
        name.last = parts.pop()
    if parts:
        name.first = parts.pop(0)
    if parts:
        name.middle = " ".join(parts)


def _first_last(text: str) -> tuple[str, str]:
    full = parse_full_name(text)
    first = f"{full.first} {full.middle}" if full.first and full.middle else full.first
    return first, full.last


def _is_a_last_name(text: str) -> bool:
    return " " not in text or not parse_full_name(text).first


def parse_name_string(text: str | None) -> list[str]:
    """parseNameString.parse(text).names: the names ABS keeps (``[]`` for an empty string)."""
    if not text:
        return []
    for sep in ("&", " and ", ";"):
        if sep in text:
            pieces = [p for chunk in text.split(sep) for p in chunk.split(",")]
            break
    else:
        pieces = text.split(",")
    pieces = [p.strip() for p in pieces]
    if _CJK.search(pieces[0]):
        return pieces
    names: list[tuple[str, str]] = []
    if len(pieces) == 1:
        names.append(_first_last(text))
    else:
        last_first = "," in text and _is_a_last_name(pieces[0])
        if last_first:
            pieces = pieces[: len(pieces) - len(pieces) % 2]
            names += [(pieces[i + 1], pieces[i]) for i in range(0, len(pieces), 2)]
        else:
            names += [_first_last(piece) for piece in pieces]
    shown = [f"{first} {last}" if first else last for first, last in names if first or last]
    return list(dict.fromkeys(shown))
