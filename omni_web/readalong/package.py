"""Reading and editing an EPUB's package: container, OPF manifest and spine, and the EPUB 2 → 3 lift.

Only what the read-along writer needs: file paths are kept as they are inside the ZIP (the OPF's
folder joined with each ``href``), so a chapter's ``source_href`` (relative to the OPF, as the book
layer reports it) maps straight onto a ZIP entry.
"""

from __future__ import annotations

import posixpath
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote, unquote

from lxml import etree

from omni_web.errors import NotAnEpub

__all__ = [
    "OPF_NS",
    "HTML5_DOCTYPE",
    "ManifestItem",
    "Package",
    "lift_xhtml",
    "parse_document",
    "read_package",
]

HTML5_DOCTYPE = "<!DOCTYPE html>"
# The http-equiv values HTML5 allows; XHTML 1.1 pages also carry Content-Style-Type and the like.
_HTTP_EQUIV = frozenset(
    {"content-type", "default-style", "refresh", "x-ua-compatible", "content-security-policy"}
)

OPF_NS = "http://www.idpf.org/2007/opf"
_CONTAINER_NS = "urn:oasis:names:tc:opendocument:xmlns:container"
_DC_NS = "http://purl.org/dc/elements/1.1/"
_NCX_NS = "http://www.daisy.org/z3986/2005/ncx/"
_XHTML_NS = "http://www.w3.org/1999/xhtml"
_EPUB_NS = "http://www.idpf.org/2007/ops"
_OPF_ATTR = f"{{{OPF_NS}}}"
_XSI_TYPE = "{http://www.w3.org/2001/XMLSchema-instance}type"


def _parser() -> etree.XMLParser:
    # Comments and processing instructions stay: the book is to come out as it went in.
    return etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False)


def parse_document(data: bytes) -> etree._Element:
    """Parse an XML document of the book safely (no DTDs, no entities, no network).

    Raises:
        etree.XMLSyntaxError: not well-formed.
    """
    return etree.fromstring(data, _parser())


@dataclass(frozen=True, slots=True)
class ManifestItem:
    """One manifest entry; ``path`` is its ZIP entry name."""

    id: str
    href: str
    path: str
    media_type: str
    element: etree._Element


@dataclass
class Package:
    """The OPF of a book, parsed and editable in place."""

    opf_path: str
    root: etree._Element
    items: dict[str, ManifestItem]  # by id
    spine: list[str]  # item ids in reading order

    @property
    def opf_dir(self) -> str:
        """The OPF's folder inside the ZIP ("" at the top)."""
        return posixpath.dirname(self.opf_path)

    @property
    def version(self) -> str:
        """The package's ``version`` attribute ("2.0", "3.0")."""
        return self.root.get("version", "")

    def path_of(self, href: str) -> str:
        """ZIP entry name of an ``href`` relative to the OPF."""
        return posixpath.normpath(posixpath.join(self.opf_dir, unquote(href)))

    def href_of(self, path: str) -> str:
        """``href`` relative to the OPF for a ZIP entry name."""
        return quote(posixpath.relpath(path, self.opf_dir or "."))

    def spine_paths(self) -> list[str]:
        """ZIP entry names of the spine's documents, in reading order."""
        return [self.items[idref].path for idref in self.spine if idref in self.items]

    def item_by_path(self, path: str) -> ManifestItem | None:
        """The manifest entry of a ZIP entry name."""
        return next((item for item in self.items.values() if item.path == path), None)

    def _section(self, name: str) -> etree._Element:
        found = self.root.find(f"{{{OPF_NS}}}{name}")
        if found is None:
            raise NotAnEpub(f"The package document has no <{name}>; the book cannot be rewritten.")
        return found

    def new_id(self, wanted: str) -> str:
        """``wanted``, or ``wanted-2``… when an element of the OPF already has that id."""
        taken = {e.get("id") for e in self.root.iter() if isinstance(e.tag, str) and e.get("id")}
        candidate, n = wanted, 1
        while candidate in taken:
            n += 1
            candidate = f"{wanted}-{n}"
        return candidate

    def add_item(self, wanted_id: str, path: str, media_type: str, **attributes: str) -> str:
        """Add a manifest entry for a new ZIP entry; returns its id."""
        item_id = self.new_id(wanted_id)
        element = etree.SubElement(
            self._section("manifest"),
            f"{{{OPF_NS}}}item",
            {"id": item_id, "href": self.href_of(path), "media-type": media_type, **attributes},
        )
        self.items[item_id] = ManifestItem(item_id, element.get("href"), path, media_type, element)
        return item_id

    def add_meta(self, property_name: str, value: str, *, refines: str | None = None) -> None:
        """Add an EPUB 3 ``<meta property=...>`` (replacing an unrefined one of that property)."""
        metadata = self._section("metadata")
        if refines is None:
            for old in metadata.findall(f"{{{OPF_NS}}}meta"):
                if old.get("property") == property_name and old.get("refines") is None:
                    metadata.remove(old)
        meta = etree.SubElement(metadata, f"{{{OPF_NS}}}meta", {"property": property_name})
        if refines is not None:
            meta.set("refines", refines)
        meta.text = value

    def touch_modified(self, when: datetime | None = None) -> None:
        """Set ``dcterms:modified`` (EPUB 3 requires it and it must say when the file changed)."""
        stamp = (when or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.add_meta("dcterms:modified", stamp)

    def to_bytes(self) -> bytes:
        """The OPF serialised."""
        return etree.tostring(self.root.getroottree(), xml_declaration=True, encoding="utf-8")

    def upgrade_to_epub3(self, ncx: bytes | None, nav_path: str) -> bytes | None:
        """Make an EPUB 2 package an EPUB 3 one (media overlays exist only there).

        Drops the ``opf:`` and ``xsi:type`` attributes EPUB 3 forbids, keeps one ``dc:date``,
        and builds the required navigation document from the NCX. Returns the nav document's
        bytes (to be stored at ``nav_path``), or None when the package is EPUB 3 already.
        """
        if self.version.startswith("3"):
            return None
        self.root.set("version", "3.0")
        metadata = self._section("metadata")
        dates = []
        for element in metadata:
            if not isinstance(element.tag, str):
                continue
            for name in list(element.attrib):
                if name.startswith(_OPF_ATTR) or name == _XSI_TYPE:
                    del element.attrib[name]
            if element.tag == f"{{{_DC_NS}}}date":
                dates.append(element)
        for extra in dates[1:]:
            metadata.remove(extra)
        title = metadata.findtext(f"{{{_DC_NS}}}title") or "Contents"
        self.add_item("readalong-nav", nav_path, "application/xhtml+xml", properties="nav")
        return _nav_document(ncx, title, nav_path, self)


def _nav_document(ncx: bytes | None, title: str, nav_path: str, package: Package) -> bytes:
    """An EPUB 3 navigation document with the NCX's entries (or the spine's documents)."""
    html = etree.Element(f"{{{_XHTML_NS}}}html", nsmap={None: _XHTML_NS, "epub": _EPUB_NS})
    head = etree.SubElement(html, f"{{{_XHTML_NS}}}head")
    etree.SubElement(head, f"{{{_XHTML_NS}}}title").text = title
    body = etree.SubElement(html, f"{{{_XHTML_NS}}}body")
    nav = etree.SubElement(body, f"{{{_XHTML_NS}}}nav", {f"{{{_EPUB_NS}}}type": "toc", "id": "toc"})
    etree.SubElement(nav, f"{{{_XHTML_NS}}}h1").text = title
    top = etree.SubElement(nav, f"{{{_XHTML_NS}}}ol")
    nav_dir = posixpath.dirname(nav_path)
    ncx_dir = package.opf_dir

    def link(parent: etree._Element, label: str, target: str) -> etree._Element:
        li = etree.SubElement(parent, f"{{{_XHTML_NS}}}li")
        anchor = etree.SubElement(li, f"{{{_XHTML_NS}}}a", {"href": target})
        anchor.text = label or "Section"
        return li

    def relative(src: str) -> str:
        path, _, fragment = src.partition("#")
        full = posixpath.normpath(posixpath.join(ncx_dir, unquote(path)))
        rel = quote(posixpath.relpath(full, nav_dir or "."))
        return f"{rel}#{fragment}" if fragment else rel

    def walk(points: list[etree._Element], parent: etree._Element) -> None:
        for point in points:
            label = (
                " ".join("".join(point.find(f"{{{_NCX_NS}}}navLabel").itertext()).split())
                if point.find(f"{{{_NCX_NS}}}navLabel") is not None
                else ""
            )
            content = point.find(f"{{{_NCX_NS}}}content")
            if content is None or not content.get("src"):
                continue
            li = link(parent, label, relative(content.get("src")))
            children = point.findall(f"{{{_NCX_NS}}}navPoint")
            if children:
                walk(children, etree.SubElement(li, f"{{{_XHTML_NS}}}ol"))

    points: list[etree._Element] = []
    if ncx:
        try:
            nav_map = parse_document(ncx).find(f"{{{_NCX_NS}}}navMap")
            points = nav_map.findall(f"{{{_NCX_NS}}}navPoint") if nav_map is not None else []
        except etree.XMLSyntaxError:
            points = []
    if points:
        walk(points, top)
    if not len(top):
        for n, path in enumerate(package.spine_paths(), start=1):
            link(top, f"Part {n}", quote(posixpath.relpath(path, nav_dir or ".")))
    return etree.tostring(html, xml_declaration=True, encoding="utf-8", doctype="<!DOCTYPE html>")


def lift_xhtml(root: etree._Element) -> None:
    """Make an XHTML 1.1 page a valid EPUB 3 one in place (serialise it with ``HTML5_DOCTYPE``).

    Drops what HTML5 no longer allows and the page does not need: ``<meta http-equiv>`` values
    like Content-Style-Type and ``<table summary>``.
    """
    for table in root.iter(f"{{{_XHTML_NS}}}table"):
        table.attrib.pop("summary", None)
    for meta in list(root.iter(f"{{{_XHTML_NS}}}meta")):
        value = meta.get("http-equiv")
        if value is not None and value.lower() not in _HTTP_EQUIV and meta.getparent() is not None:
            meta.getparent().remove(meta)


def read_package(archive: zipfile.ZipFile) -> Package:
    """The book's OPF from its container.

    Raises:
        NotAnEpub: no container, no package document, or one that does not parse.
    """
    try:
        container = parse_document(archive.read("META-INF/container.xml"))
        rootfile = container.find(f".//{{{_CONTAINER_NS}}}rootfile")
        opf_path = rootfile.get("full-path") if rootfile is not None else None
        if not opf_path:
            raise NotAnEpub("The book's META-INF/container.xml names no package document.")
        root = parse_document(archive.read(opf_path))
    except KeyError as exc:
        raise NotAnEpub(f"The book lacks a file it needs ({exc}).") from exc
    except etree.XMLSyntaxError as exc:
        raise NotAnEpub(f"The book's package document does not parse ({exc}).") from exc
    package = Package(opf_path, root, {}, [])
    manifest = root.find(f"{{{OPF_NS}}}manifest")
    for element in manifest if manifest is not None else ():
        if isinstance(element.tag, str) and element.get("id") and element.get("href"):
            href = element.get("href")
            package.items[element.get("id")] = ManifestItem(
                element.get("id"), href, package.path_of(href), element.get("media-type", ""), element
            )
    spine = root.find(f"{{{OPF_NS}}}spine")
    package.spine = [e.get("idref") for e in (spine if spine is not None else ()) if isinstance(e.tag, str)]
    return package
