"""A PDF's pages as positioned lines, with pdfminer's layout analysis: the page-reading half of the PDF reader.

Each page's text lines with their font size, box and weight (:class:`~omni_web.book.pdflayout.Line`),
the pictures seen, and the first page's cover picture. Letters a font does not map to text are
read from the embedded font program (:mod:`omni_web.book.pdfglyphs`) or dropped and counted, never
spoken as "(cid:18)"; letters and lines drawn twice over themselves (overprinted bold) are read once.
Text inside a form drawn over most of a page (a whole page placed as one picture-like form) is
read; labels inside smaller drawings are not.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from omni_web.book.model import CoverImage
from omni_web.book.pdflayout import Line, PageLines
from omni_web.book.pdfvertical import columns_as_lines
from omni_web.book.pdfvertical import reads_down as _reads_down
from omni_web.errors import UnsafeBook

__all__ = ["MAX_PDF_PAGES", "MAX_PDF_SECONDS", "PdfPages", "read_pdf_pages"]

MAX_PDF_PAGES = 5000
MAX_PDF_SECONDS = 900.0  # layout analysis of a very long book; a crafted PDF stops here
_SCAN_PROBE_PAGES = 4  # pages looked at before deciding that a PDF is scanned
_SUPERSCRIPT_RATIO = 0.75  # note markers are set this much smaller than their line
# Font names say the weight and slant ("Garamond,Bold", "Times-BoldItalic", "ABCDEF+Arial-Black").
_BOLD_RE = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)
_ITALIC_RE = re.compile(r"italic|oblique", re.IGNORECASE)
_COVER_AREA_SHARE = 0.4
_SMALLEST_READ = 3.5  # points: smaller text is not for reading
_BODY_FIGURE_SHARE = 0.4  # a form covering this much of its page holds the page's text
_SCAN_PICTURE_SHARE = 0.15  # a picture covering this much of a page is a scanned page...
_STRAY_WORDS = 25  # ... when no more words than this are set over it (a watermark, a page label)


@dataclass(frozen=True, slots=True)
class PdfPages:
    """What the layout analysis found: each page's lines, and what could not be read."""

    pages: tuple[PageLines, ...]
    images: int  # pictures seen on all pages
    cover: CoverImage | None  # a JPEG over much of page one
    page_of: dict[int, int]  # page object id -> 0-based page index (where outline entries point)
    glyphs: int = 0  # letters laid out
    scanned_pages: int = 0  # pages that are a picture with at most a few stray words on it
    dropped_glyphs: int = 0  # letters no font map could turn into text: left out


def read_pdf_pages(document: Any, *, name: str, max_seconds: float = MAX_PDF_SECONDS) -> PdfPages:
    """Lines of every page, pictures seen, the first page's cover picture, page object id → index.

    Stops early when the first pages are pictures without text (a scan).
    """
    from pdfminer.pdfpage import PDFPage

    from omni_web.book.pdfcontent import page_interpreter

    device = _device()
    vertical = None
    interpreter = page_interpreter(device.rsrcmgr, device)
    deadline = time.monotonic() + max_seconds
    pages: list[PageLines] = []
    images, cover, scanned = 0, None, 0
    page_ids: dict[int, int] = {}
    for index, page in enumerate(PDFPage.create_pages(document)):
        if index >= MAX_PDF_PAGES:
            raise UnsafeBook(
                f"'{name}' has more than {MAX_PDF_PAGES} pages; it was not read. Split it first."
            )
        if time.monotonic() > deadline:
            raise UnsafeBook(
                f"'{name}' took more than {max_seconds:.0f} s to lay out; it was not read. Use another "
                "copy of the book (or split it)."
            )
        interpreter.process_page(page)
        layout = device.get_result()
        lines, page_images = _page_lines(layout)
        if _reads_down(lines):
            # Vertical writing (Japanese, Chinese) laid out as rows reads across its columns:
            # the page again with vertical lines, its columns right to left.
            vertical = vertical or _device(vertical=True)
            page_interpreter(vertical.rsrcmgr, vertical).process_page(page)
            layout = vertical.get_result()
            lines = columns_as_lines(_page_lines(layout, vertical=True)[0], layout.height)
        images += len(page_images)
        scanned += _is_scanned_page(lines, page_images, layout)
        if index == 0 and page_images:
            cover = _cover(page_images, layout)
        pages.append(PageLines(number=index, lines=tuple(lines), width=layout.width, height=layout.height))
        page_ids[page.pageid] = index
        if (
            index + 1 == _SCAN_PROBE_PAGES
            and images
            and not any(p.lines for p in pages)
            and not _middle_has_text(document, interpreter, device)
        ):
            break  # a scan: refuse in seconds, not after laying out a 400-page book of pictures
    laid_out = sum(len(line.text) for page in pages for line in page.lines)
    return PdfPages(
        pages=tuple(pages),
        images=images,
        cover=cover,
        page_of=page_ids,
        glyphs=laid_out + device.dropped,
        scanned_pages=scanned,
        dropped_glyphs=device.dropped,
    )


def _is_scanned_page(lines: list[Line], images: list[Any], layout: Any) -> bool:
    area = max(layout.width * layout.height, 1.0)
    largest = max(((x.x1 - x.x0) * (x.y1 - x.y0) for x in images), default=0.0)
    return largest >= area * _SCAN_PICTURE_SHARE and sum(len(x.text.split()) for x in lines) <= _STRAY_WORDS


def _device(*, vertical: bool = False) -> Any:
    """pdfminer's page aggregator, with fonts mended from their programs and unmapped letters counted.

    The classes are made here so that pdfminer is imported only when a PDF is read.
    """
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.layout import LAParams
    from pdfminer.pdfinterp import PDFResourceManager

    from omni_web.book.pdfglyphs import fix_font

    class Fonts(PDFResourceManager):
        def get_font(self, objid: Any, spec: Any) -> Any:
            known = objid is not None and objid in self._cached_fonts
            font = super().get_font(objid, spec)
            if not known:
                fix_font(font, spec)
            return font

    class Pages(PDFPageAggregator):
        dropped = 0

        def paint_path(self, *_args: Any) -> None:
            return  # lines and shapes are never read aloud: not laid out at all

        def handle_undefined_char(self, font: Any, cid: int) -> str:
            self.dropped += 1
            return ""  # never "(cid:18)": counted, and the book says how many were left out

    # boxes_flow=None: pdflayout orders lines itself; all_texts: a page drawn as one form has its text there.
    laparams = LAParams(line_margin=0.5, boxes_flow=None, all_texts=True, detect_vertical=vertical)
    return Pages(Fonts(caching=True), laparams=laparams)


def _middle_has_text(document: Any, interpreter: Any, device: Any) -> bool:
    """Whether the page halfway through has text (pictures first, then text: an illustrated front)."""
    from itertools import islice

    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdftypes import resolve1

    try:
        count = int(resolve1(resolve1(document.catalog.get("Pages")).get("Count", 0)))
    except (AttributeError, TypeError, ValueError):
        return False
    middle = next(islice(PDFPage.create_pages(document), count // 2, None), None)
    if middle is None:
        return False
    interpreter.process_page(middle)
    return bool(_page_lines(device.get_result())[0])


def _page_lines(layout: Any, *, vertical: bool = False) -> tuple[list[Line], list[Any]]:
    from pdfminer.layout import LTChar, LTFigure, LTImage, LTTextBox, LTTextLine, LTTextLineVertical

    lines: list[Line] = []
    images: list[Any] = []
    page_area = layout.width * layout.height

    def visit(item: Any) -> None:
        if vertical and isinstance(item, LTTextLine) and not isinstance(item, LTTextLineVertical):
            return  # a vertical page's row lines (a page number) are left out
        if isinstance(item, LTTextLine):
            line = _line(item, LTChar)
            # a line drawn twice over itself (overprinted bold, a shadow) is read once
            if line is not None and not any(
                x.text == line.text and abs(x.x0 - line.x0) < 2 and abs(x.y0 - line.y0) < 2
                for x in lines[-8:]
            ):
                lines.append(line)
        elif isinstance(item, LTFigure) and (item.width * item.height) < page_area * _BODY_FIGURE_SHARE:
            images.extend(
                child for child in item if isinstance(child, LTImage)
            )  # a drawing's labels are not read
        elif (
            isinstance(item, LTTextBox | LTFigure)
            or hasattr(item, "__iter__")
            and not isinstance(item, LTImage)
        ):
            for child in item:
                visit(child)
        if isinstance(item, LTImage):
            images.append(item)

    for item in layout:
        visit(item)
    return lines, images


def _line(item: Any, char_type: type) -> Line | None:
    chars = [c for c in item if isinstance(c, char_type) and c.get_text().strip()]
    if not chars:
        return None
    sizes = sorted(c.size for c in chars)
    size = sizes[len(sizes) // 2]
    if size < _SMALLEST_READ:
        return None  # print no reader could see (a printer's mark, letters turned along the margin)
    text = []
    marks, in_mark = 0, False
    drawn: dict[str, list[Any]] = {}
    for c in item:
        piece = c.get_text()
        if isinstance(c, char_type):
            same = drawn.get(piece)
            if same is None:
                drawn[piece] = [c]  # the letter's first time on the line: nothing to compare with
            elif _overprinted(c, same):
                continue  # bold faked by printing each letter (or word) twice, a hair apart: "DDaattaa"
            else:
                same.append(c)
        # A note marker: a digit or symbol set small and raised ("word¹"), never read mid-sentence.
        if (
            isinstance(c, char_type)
            and c.size < size * _SUPERSCRIPT_RATIO
            and (piece.isdigit() or piece in "*†‡§")
        ):
            marks += not in_mark
            in_mark = True
            continue
        in_mark = False
        text.append(piece)
    joined = "".join(text).replace("\n", " ").strip()
    if not joined:
        return None
    fonts = Counter(c.fontname for c in chars)  # a line sets a few fonts: each name is searched once
    bold = sum(n for font, n in fonts.items() if _BOLD_RE.search(font)) * 2 > len(chars)
    italic = sum(n for font, n in fonts.items() if _ITALIC_RE.search(font)) * 2 > len(chars)
    return Line(
        text=joined,
        size=size,
        x0=item.x0,
        x1=item.x1,
        y0=item.y0,
        y1=item.y1,
        marks=marks,
        bold=bold,
        italic=italic,
    )


def _overprinted(char: Any, same: Any) -> bool:
    """Whether ``char`` repeats a letter already drawn at (nearly) the same place on its line."""
    if not char.get_text().strip():
        return False
    tolerance = max(char.width * 0.35, 0.5)
    return any(abs(char.x0 - c.x0) < tolerance and abs(char.y0 - c.y0) < tolerance for c in same)


def _cover(page_images: list[Any], layout: Any) -> CoverImage | None:
    """A JPEG covering much of page one is the cover (other encodings would need decoding)."""
    page_area = max(layout.width * layout.height, 1.0)
    for image in page_images:
        area = (image.x1 - image.x0) * (image.y1 - image.y0)
        filters = [str(f) for f in image.stream.get_filters()] if hasattr(image.stream, "get_filters") else []
        if area >= page_area * _COVER_AREA_SHARE and any("DCT" in f for f in filters[-1:] or [""]):
            try:
                return CoverImage(data=image.stream.get_rawdata() or b"", media_type="image/jpeg")
            except Exception:  # noqa: BLE001 - a damaged picture stream only costs the cover
                return None
    return None
