"""Importing from a library's OPDS catalog (Calibre's content server, Calibre-Web, Kavita):
browse and search OPDS 1.2 (Atom) and OPDS 2 (JSON) feeds with basic auth, and hand the chosen
books to the queue with the catalog's authors, series and description.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote, urljoin

import httpx
from lxml import etree

from omni_web.book import Book
from omni_web.errors import BookError

__all__ = ["OpdsClient", "OpdsEntry", "OpdsFeed", "apply_catalog_metadata", "parse_feed"]

_NS = {
    "a": "http://www.w3.org/2005/Atom",
    "dc": "http://purl.org/dc/terms/",
    "os": "http://a9.com/-/spec/opensearch/1.1/",
}
_ACQUISITION = "http://opds-spec.org/acquisition"
_BOOK_TYPES = (
    "application/epub+zip",
    "application/pdf",
    "application/x-mobipocket-ebook",
    "application/x-fictionbook+xml",
    "text/plain",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
)
_SERIES_TEXT = re.compile(r"SERIES:\s*(.+?)\s*\[(\d+(?:\.\d+)?)\]", re.IGNORECASE)  # Calibre's entry content


@dataclass(frozen=True, slots=True)
class OpdsEntry:
    """A catalog entry: a book (``acquisition`` set) or a section to open (``navigation`` set)."""

    title: str
    authors: tuple[str, ...] = ()
    series: str = ""
    series_index: str = ""
    description: str = ""
    subjects: tuple[str, ...] = ()
    language: str = ""
    acquisition: str = ""
    media_type: str = ""
    navigation: str = ""

    def catalog_metadata(self) -> dict[str, Any]:
        """What the catalog knows beyond the file, to carry into the book's metadata (empty fields left
        out)."""
        found = {
            "authors": list(self.authors),
            "series": self.series,
            "series_index": self.series_index,
            "description": self.description,
            "subjects": list(self.subjects),
        }
        return {key: value for key, value in found.items() if value}


@dataclass(frozen=True, slots=True)
class OpdsFeed:
    """One page of a catalog: its entries, the next page and the search template, as absolute URLs."""

    title: str
    entries: tuple[OpdsEntry, ...] = ()
    next: str = ""
    search: str = ""  # a URL template with {searchTerms}, or an OpenSearch description to read first
    search_is_description: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)


def _text(node, path: str) -> str:
    found = node.find(path, _NS)
    return "".join(found.itertext()).strip() if found is not None else ""


def _atom_entry(node, base: str) -> OpdsEntry:
    acquisition = navigation = media = ""
    for link in node.findall("a:link", _NS):
        rel, kind, href = link.get("rel", ""), link.get("type", ""), urljoin(base, link.get("href", ""))
        if rel.startswith(_ACQUISITION) and (not acquisition or kind == "application/epub+zip"):
            if kind.split(";")[0] in _BOOK_TYPES or not acquisition:
                acquisition, media = href, kind
        elif "opds-catalog" in kind and not navigation and not rel.startswith("http://opds-spec.org/"):
            navigation = href
    content = _text(node, "a:content") or _text(node, "a:summary")
    series = _SERIES_TEXT.search(content)
    return OpdsEntry(
        title=_text(node, "a:title"),
        authors=tuple(_text(a, "a:name") for a in node.findall("a:author", _NS) if _text(a, "a:name")),
        series=series.group(1) if series else "",
        series_index=series.group(2) if series else "",
        description=content,
        subjects=tuple(c.get("label") or c.get("term", "") for c in node.findall("a:category", _NS)),
        language=_text(node, "dc:language"),
        acquisition=acquisition,
        media_type=media,
        navigation="" if acquisition else navigation,
    )


def _parse_atom(data: bytes, base: str) -> OpdsFeed:
    try:
        root = etree.fromstring(data, parser=etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as exc:
        raise BookError(f"The catalog at {base} did not answer with an OPDS feed ({exc}).") from exc
    links = {link.get("rel", ""): link for link in root.findall("a:link", _NS)}
    search = links.get("search")
    template = urljoin(base, search.get("href", "")) if search is not None else ""
    return OpdsFeed(
        title=_text(root, "a:title"),
        entries=tuple(_atom_entry(e, base) for e in root.findall("a:entry", _NS)),
        next=urljoin(base, links["next"].get("href", "")) if "next" in links else "",
        search=template,
        search_is_description=bool(search is not None and "opensearchdescription" in search.get("type", "")),
    )


def _json_entry(item: Mapping[str, Any], base: str) -> OpdsEntry:
    meta = item.get("metadata", item)
    authors = meta.get("author") or []
    authors = [authors] if isinstance(authors, (str, dict)) else authors
    names = tuple(a if isinstance(a, str) else str(a.get("name", "")) for a in authors)
    series = (meta.get("belongsTo") or {}).get("series") or [{}]
    series = series[0] if isinstance(series, list) else series
    series = {"name": series} if isinstance(series, str) else series
    links = item.get("links") or []
    acquisition = next(
        (
            link
            for link in links
            if str(link.get("rel", "")).startswith(_ACQUISITION) or link.get("type") in _BOOK_TYPES
        ),
        None,
    )
    subjects = [s if isinstance(s, str) else str(s.get("name", "")) for s in meta.get("subject") or []]
    language = meta.get("language") or ""
    return OpdsEntry(
        title=str(meta.get("title", "")),
        authors=names,
        series=str(series.get("name", "")),
        series_index=str(series.get("position", "") or ""),
        description=str(meta.get("description", "")),
        subjects=tuple(subjects),
        language=language[0] if isinstance(language, list) else str(language),
        acquisition=urljoin(base, acquisition["href"]) if acquisition else "",
        media_type=acquisition.get("type", "") if acquisition else "",
        navigation="" if acquisition else urljoin(base, item.get("href", "")) if item.get("href") else "",
    )


def _parse_json(doc: Mapping[str, Any], base: str) -> OpdsFeed:
    links = {link.get("rel"): link for link in doc.get("links") or [] if isinstance(link.get("rel"), str)}
    entries = [_json_entry(p, base) for p in doc.get("publications") or []]
    entries += [
        _json_entry({"metadata": {"title": n.get("title", "")}, "href": n.get("href", "")}, base)
        for n in doc.get("navigation") or []
    ]
    for group in doc.get("groups") or []:
        entries += [_json_entry(p, base) for p in group.get("publications") or []]
    search = links.get("search", {}).get("href", "")
    return OpdsFeed(
        title=str((doc.get("metadata") or {}).get("title", "")),
        entries=tuple(entries),
        next=urljoin(base, links["next"]["href"]) if "next" in links else "",
        search=urljoin(base, search.replace("{?query}", "?query={searchTerms}")) if search else "",
    )


def parse_feed(data: bytes, content_type: str, base: str) -> OpdsFeed:
    """An OPDS 1.2 (Atom) or 2 (JSON) feed; relative links resolved against ``base``."""
    if "json" in content_type or data.lstrip()[:1] == b"{":
        return _parse_json(json.loads(data), base)
    return _parse_atom(data, base)


class OpdsClient:
    """Reads one catalog (basic auth when a user is given)."""

    def __init__(self, url: str, *, username: str = "", password: str = "", timeout_s: float = 30.0) -> None:
        self.url = url
        self.username, self.password = username, password
        self._auth = httpx.BasicAuth(username, password) if username else None
        self._timeout = timeout_s

    def _get(self, url: str) -> httpx.Response:
        try:
            response = httpx.get(url, auth=self._auth, timeout=self._timeout, follow_redirects=True)
        except httpx.HTTPError as exc:
            raise BookError(f"The catalog at {url} cannot be reached ({exc}); check the address.") from exc
        if response.status_code == 401:
            raise BookError(f"The catalog at {url} wants a user and password (HTTP 401); check them.")
        if response.status_code >= 400:
            raise BookError(f"The catalog at {url} answered HTTP {response.status_code}.")
        return response

    def feed(self, url: str = "") -> OpdsFeed:
        """The feed at ``url`` (default: the catalog's root)."""
        response = self._get(url or self.url)
        return parse_feed(response.content, response.headers.get("content-type", ""), str(response.url))

    def search(self, query: str, root: OpdsFeed | None = None) -> OpdsFeed:
        """Search the catalog (its OpenSearch template); raises BookError when it has no search."""
        root = root or self.feed()
        template = root.search
        if root.search_is_description:
            description = etree.fromstring(
                self._get(template).content, parser=etree.XMLParser(resolve_entities=False)
            )
            urls = description.findall("os:Url", _NS)
            chosen = next(
                (u for u in urls if "atom" in u.get("type", "") or "opds" in u.get("type", "")), None
            )
            template = urljoin(template, chosen.get("template", "")) if chosen is not None else ""
        if not template:
            raise BookError(f"The catalog at {self.url} offers no search; browse it instead.")
        return self.feed(template.replace("{searchTerms}", quote(query)))


def apply_catalog_metadata(book: Book, catalog: Mapping[str, Any] | None) -> Book:
    """The book with the catalog's authors, series and description (where the catalog has them)."""
    if not catalog:
        return book
    meta = book.metadata
    changes: dict[str, Any] = {}
    if catalog.get("authors"):
        changes["authors"] = tuple(catalog["authors"])
    for name in ("series", "series_index", "description"):
        if catalog.get(name):
            changes[name] = str(catalog[name])
    if catalog.get("subjects") and not meta.subjects:
        changes["subjects"] = tuple(catalog["subjects"])
    return replace(book, metadata=replace(meta, **changes)) if changes else book
