"""The package document's richer metadata: subtitle, series and index, identifiers, subjects.

Pure functions over what ebooklib returns for ``get_metadata("DC", ...)`` and ``("OPF", "meta")``
(value, attributes) pairs, so every rule is unit-tested without an EPUB. Both conventions in use
are read: calibre's EPUB 2 ``<meta name="calibre:series" content=…>`` / ``calibre:series_index``
and EPUB 3's ``belongs-to-collection`` refined by ``collection-type`` and ``group-position``;
EPUB 3 wins when both are present (it is the newer statement of the same fact).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from omni_web.book.model import Identifier

__all__ = [
    "MetaPairs",
    "parse_identifiers",
    "parse_series",
    "parse_subjects",
    "parse_subtitle",
    "refinements",
]

MetaPairs = Iterable[tuple[str | None, Mapping[str, str]]]

_OPF_NS = "http://www.idpf.org/2007/opf"
# "urn:isbn:…" (EPUB 3) and calibre's bare "isbn:…" both name their scheme.
_URN = re.compile(r"^(?:urn:)?(isbn|uuid|asin|mobi-asin|amazon|doi|issn):(.+)$", re.IGNORECASE)
_ISBN = re.compile(r"^(97[89])?\d{9}[\dX]$")


def refinements(metas: MetaPairs) -> dict[str, dict[str, str]]:
    """EPUB 3 ``<meta refines="#id" property=…>`` by target id, the first value per property."""
    found: dict[str, dict[str, str]] = {}
    for value, attrs in metas:
        refines, prop = attrs.get("refines", ""), attrs.get("property", "")
        if refines.startswith("#") and prop and value and str(value).strip():
            found.setdefault(refines[1:], {}).setdefault(prop, str(value).strip())
    return found


def parse_subtitle(
    titles: Iterable[tuple[str, Mapping[str, str]]], refined: Mapping[str, Mapping[str, str]]
) -> str:
    """The EPUB 3 title refined as ``title-type`` subtitle, "" when none is."""
    for value, attrs in titles:
        if refined.get(attrs.get("id", ""), {}).get("title-type", "").lower() == "subtitle":
            return value
    return ""


def _index(text: str) -> str:
    """A series position as people write it: "2.0" → "2", "2.5" stays, anything else → ""."""
    try:
        number = float(text.strip())
    except ValueError:
        return ""
    if number < 0 or number != number:
        return ""
    return str(int(number)) if number.is_integer() else f"{number:g}"


def parse_series(metas: MetaPairs) -> tuple[str, str]:
    """``(series name, index)`` from EPUB 3 collections or calibre's metas; ``("", "")`` when none."""
    pairs = list(metas)
    refined = refinements(pairs)
    for value, attrs in pairs:
        if attrs.get("property") != "belongs-to-collection" or not value or not str(value).strip():
            continue
        details = refined.get(attrs.get("id", ""), {})
        if details.get("collection-type", "series").lower() == "series":
            return str(value).strip(), _index(details.get("group-position", ""))
    named = {
        attrs.get("name", ""): attrs.get("content", "").strip() for _, attrs in pairs if attrs.get("name")
    }
    series = named.get("calibre:series", "")
    return (series, _index(named.get("calibre:series_index", ""))) if series else ("", "")


def _scheme_value(value: str, scheme: str) -> Identifier:
    match = _URN.match(value)
    if match:
        scheme, value = match.group(1), match.group(2).strip()
    scheme = scheme.strip().upper()
    scheme = "ASIN" if scheme in ("MOBI-ASIN", "AMAZON") else scheme
    if scheme in ("", "15", "ISBN-13", "ISBN-10") and _ISBN.match(value.replace("-", "")):
        scheme = "ISBN"
    if scheme == "ISBN":
        value = value.replace("-", "").replace(" ", "")
    return Identifier(scheme, value)


def parse_identifiers(
    values: Iterable[tuple[str, Mapping[str, str]]], refined: Mapping[str, Mapping[str, str]]
) -> tuple[Identifier, ...]:
    """Every ``dc:identifier`` with its scheme: ``opf:scheme``, EPUB 3 ``identifier-type``, a
    ``urn:isbn:`` style prefix, or a bare 10/13-digit ISBN."""
    found: list[Identifier] = []
    for value, attrs in values:
        scheme = attrs.get(f"{{{_OPF_NS}}}scheme") or attrs.get("scheme") or ""
        scheme = scheme or refined.get(attrs.get("id", ""), {}).get("identifier-type", "")
        item = _scheme_value(value, scheme)
        if item.value and item not in found:
            found.append(item)
    return tuple(found)


def parse_subjects(values: Iterable[tuple[str, Mapping[str, str]]]) -> tuple[str, ...]:
    """``dc:subject`` values in order, without repeats."""
    return tuple(dict.fromkeys(value for value, _ in values if value))
