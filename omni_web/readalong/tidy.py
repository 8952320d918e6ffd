"""Small repairs and additions the read-along EPUB makes to the book it copies.

- Accessibility metadata (EPUB Accessibility 1.1, schema.org terms, which EPUB 3 predefines the
  ``schema:`` prefix for): the book is read textually and aurally, and has synchronised audio.
- ``epub:switch`` (deprecated in EPUB 3.2; EPUBCheck warns) in the pages we rewrite is replaced by
  its ``epub:default`` fallback, which is what readers without the switch show anyway.
- A navigation document without ``<title>`` gets the book's title (EPUBCheck warns without one).
"""

from __future__ import annotations

from lxml import etree

from omni_web.readalong.package import OPF_NS, Package

__all__ = ["ACCESSIBILITY", "add_accessibility", "ensure_head_title", "unwrap_switches"]

_OPS = "http://www.idpf.org/2007/ops"
_XHTML = "http://www.w3.org/1999/xhtml"

# (property, value): schema.org accessibility terms for a text with synchronised narration.
ACCESSIBILITY = (
    ("schema:accessMode", "textual"),
    ("schema:accessMode", "auditory"),
    ("schema:accessModeSufficient", "textual"),
    ("schema:accessibilityFeature", "synchronizedAudioText"),
    ("schema:accessibilityFeature", "readingOrder"),
    ("schema:accessibilityHazard", "unknown"),
)


def add_accessibility(package: Package, *, narrator: str) -> None:
    """Add :data:`ACCESSIBILITY` (values the book already states are not repeated) and a summary."""
    metadata = package.root.find(f"{{{OPF_NS}}}metadata")
    assert metadata is not None
    stated = {(m.get("property"), (m.text or "").strip()) for m in metadata.findall(f"{{{OPF_NS}}}meta")}
    for prop, value in ACCESSIBILITY:
        if (prop, value) not in stated:
            meta = etree.SubElement(metadata, f"{{{OPF_NS}}}meta", {"property": prop})
            meta.text = value
    if not any(prop == "schema:accessibilitySummary" for prop, _ in stated):
        meta = etree.SubElement(metadata, f"{{{OPF_NS}}}meta", {"property": "schema:accessibilitySummary"})
        who = f" by {narrator}" if narrator else ""
        meta.text = (f"The text is read aloud{who} (synthetic speech); EPUB 3 Media Overlays highlight each "
                     "sentence as it is spoken.")


def unwrap_switches(root: etree._Element) -> bool:
    """Replace every ``epub:switch`` by its ``epub:default`` content; True when one was found."""
    found = False
    for switch in list(root.iter(f"{{{_OPS}}}switch")):
        parent = switch.getparent()
        if parent is None:
            continue
        found = True
        default = switch.find(f"{{{_OPS}}}default")
        children = list(default) if default is not None else []
        position = parent.index(switch)
        lead = default.text if default is not None else None
        if lead and lead.strip():
            previous = parent[position - 1] if position else None
            if previous is None:
                parent.text = (parent.text or "") + lead
            else:
                previous.tail = (previous.tail or "") + lead
        for offset, child in enumerate(children):
            parent.insert(position + offset, child)
        last = children[-1] if children else (parent[position - 1] if position else None)
        if switch.tail:
            if last is None:
                parent.text = (parent.text or "") + switch.tail
            else:
                last.tail = (last.tail or "") + switch.tail
        parent.remove(switch)
    return found


def ensure_head_title(root: etree._Element, title: str) -> bool:
    """Give an XHTML document's ``<head>`` a ``<title>`` when it has none; True when one was added."""
    head = root.find(f"{{{_XHTML}}}head")
    if head is None or head.find(f"{{{_XHTML}}}title") is not None:
        return False
    element = etree.Element(f"{{{_XHTML}}}title")
    element.text = title or "Contents"
    head.insert(0, element)
    return True
