"""Letters for the codes a PDF font does not map to text, read from the embedded font program itself.

pdfminer maps a character code to text through the font's ToUnicode map, else its /Encoding,
else the standard encoding. A font whose program carries its own encoding (TeX's symbol and math
fonts, ``CMSY10``: code 0x32 is "element", not "two") and no /Encoding in the PDF is read through
the standard encoding, so "x ∈ U" becomes "x 2 U"; a code with no name in any of them comes out as
"(cid:18)". This module reads the glyph names of the embedded program (CFF with fontTools, as
pdfminer already does for Type 1) and turns them into text with the Adobe glyph list. Codes whose
glyphs have no meaningful name ("g18": a subset renamed) are dropped and counted by the caller:
nothing is spoken that is not in the book, and a book with many dropped says so.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Mapping
from typing import Any

__all__ = ["builtin_text_map", "fix_font"]

_log = logging.getLogger(__name__)


def builtin_text_map(font: Any) -> dict[int, str]:
    """Code → text of a simple font's embedded program, from its glyph names; {} when it has none.

    Only consulted for fonts without a ToUnicode map and without an /Encoding of their own (the
    font program's encoding is then the one the PDF means).
    """
    descriptor = getattr(font, "descriptor", None) or {}
    try:
        names = _cff_encoding(descriptor) or _truetype_names(descriptor)
    except Exception as exc:  # noqa: BLE001 - a font program we cannot parse only costs its letters
        _log.debug("font program of %s not read: %s", getattr(font, "basefont", "?"), exc)
        return {}
    return {code: text for code, name in names.items() if (text := _text_of(name))}


def fix_font(font: Any, spec: Mapping[str, Any]) -> None:
    """Give a simple font without ToUnicode and /Encoding its program's own letters (in place)."""
    if "ToUnicode" in spec or "Encoding" in spec or not hasattr(font, "cid2unicode"):
        return
    own = builtin_text_map(font)
    if own:
        font.cid2unicode = own


def _cff_encoding(descriptor: Mapping[str, Any]) -> dict[int, str]:
    from pdfminer.pdftypes import resolve1

    stream = resolve1(descriptor.get("FontFile3"))
    if stream is None or str(getattr(resolve1(stream.get("Subtype")), "name", "")) != "Type1C":
        return {}
    from fontTools.cffLib import CFFFontSet

    cff = CFFFontSet()
    cff.decompile(io.BytesIO(stream.get_data()), None)
    encoding = cff.topDictIndex[0].Encoding
    if not isinstance(encoding, list):
        return {}  # "StandardEncoding"/"ExpertEncoding": what pdfminer assumes already
    return {code: name for code, name in enumerate(encoding) if name and name != ".notdef"}


def _truetype_names(descriptor: Mapping[str, Any]) -> dict[int, str]:
    """A symbolic TrueType font's codes through its (3,0) or (1,0) cmap to glyph names."""
    from pdfminer.pdftypes import resolve1

    stream = resolve1(descriptor.get("FontFile2"))
    if stream is None:
        return {}
    from fontTools.ttLib import TTFont

    font = TTFont(io.BytesIO(stream.get_data()), lazy=True)
    unicode_names: dict[str, int] = {}
    codes: dict[int, str] = {}
    for table in font["cmap"].tables:
        if (table.platformID, table.platEncID) == (3, 1):
            unicode_names.update({name: point for point, name in table.cmap.items()})
        elif (table.platformID, table.platEncID) in ((3, 0), (1, 0)):
            codes.update({point & 0xFF: name for point, name in table.cmap.items()})
    # A name the font itself maps to Unicode is spelled that way ("uni2286" for a renamed glyph).
    return {
        code: (f"uni{unicode_names[name]:04X}" if name in unicode_names else name)
        for code, name in codes.items()
    }


def _text_of(name: str) -> str:
    from pdfminer.encodingdb import name2unicode

    try:
        text = name2unicode(name)
    except Exception:  # noqa: BLE001 - pdfminer raises KeyError or its own PDFKeyError for unknown names
        return ""
    # Private-use code points are a font's own drawings (logos, ornaments): nothing to say.
    return "" if any(0xE000 <= ord(ch) <= 0xF8FF or ord(ch) < 0x20 for ch in text) else text
