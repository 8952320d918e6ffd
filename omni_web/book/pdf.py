"""PDF (text layer) to a Book, with pdfminer.six: chapters from the outline, else from heading sizes.

The layout analysis gives positioned lines per page; :mod:`omni_web.book.pdflayout` turns them
into paragraphs (running heads, page numbers and footnotes dropped, hyphenation joined, columns
in order). Chapters start at the outline's entries (the bookmarks) where the PDF has them, else at
the largest heading size used more than once. Refused before any reading: a PDF that needs a
password or forbids text extraction (protected), and one whose first pages are pictures with no
text (scanned: it needs OCR first). Size, page count and time are bounded like the EPUB reader's.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

from omni_web.book.headings import is_chapter_heading
from omni_web.book.model import Book, BookMetadata, CoverImage, TextBlock
from omni_web.book.options import DEFAULT_OPTIONS, ReadOptions
from omni_web.book.parts import Part, book_from_parts, heading, paragraph
from omni_web.book.pdflayout import Line, PageLines, TextPara, body_size, heading_sizes, paragraphs
from omni_web.book.safety import DEFAULT_LIMITS, ArchiveLimits
from omni_web.book.text import text_key
from omni_web.errors import BookError, DrmProtected, NotAnEpub, ScannedBook, UnsafeBook

__all__ = ["MAX_PDF_PAGES", "MAX_PDF_SECONDS", "load_pdf", "read_pdf_pages"]

MAX_PDF_PAGES = 5000
MAX_PDF_SECONDS = 900.0  # layout analysis of a very long book; a crafted PDF stops here
_SCAN_PROBE_PAGES = 4  # pages looked at before deciding that a PDF is scanned
_SUPERSCRIPT_RATIO = 0.75  # note markers are set this much smaller than their line
# Font names say the weight and slant ("Garamond,Bold", "Times-BoldItalic", "ABCDEF+Arial-Black").
_BOLD_RE = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)
_ITALIC_RE = re.compile(r"italic|oblique", re.IGNORECASE)
_STYLE_HEADING_WORDS = 15
_COVER_AREA_SHARE = 0.4


def load_pdf(path: Path, *, limits: ArchiveLimits = DEFAULT_LIMITS, options: ReadOptions = DEFAULT_OPTIONS,
             max_seconds: float = MAX_PDF_SECONDS) -> Book:
    """Read a text PDF.

    Raises:
        DrmProtected: a password is needed, or the PDF forbids text extraction.
        ScannedBook: the pages are pictures without a text layer.
        UnsafeBook: over the size, page or time limit.
        NotAnEpub: the file is a damaged PDF (the class every unreadable book file raises).
    """
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfparser import PDFParser

    name = path.name
    size = path.stat().st_size
    if size > limits.max_file_bytes:
        raise UnsafeBook(f"'{name}' is {size / 2**20:.1f} MiB, over the {limits.max_file_bytes / 2**20:.0f} MiB "
                         "limit for one book file; it was not opened.")
    with path.open("rb") as handle:
        try:
            document = PDFDocument(PDFParser(handle), password="")
        except Exception as exc:  # pdfminer raises many unrelated types for one cause: not readable
            raise _open_error(name, exc) from exc
        if not document.is_extractable:
            raise DrmProtected(
                f"'{name}' is a protected PDF: its owner does not allow its text to be copied, so it "
                "cannot be read aloud. Use an unprotected copy of the book."
            )
        pages, images, first_image, page_of = read_pdf_pages(document, name=name, max_seconds=max_seconds)
        metadata = _metadata(document, fallback_title=path.stem)
        outline = _outline(document)
    if not any(page.lines for page in pages):
        raise _no_text(name, images, len(pages))
    parts = _parts(pages, outline, page_of, notes=options.notes_at_paragraph_end)
    return book_from_parts(parts, path=path, metadata=metadata, cover=first_image, source_format="pdf",
                           empty_hint="its pages hold no readable text")


def _open_error(name: str, exc: Exception) -> BookError:
    kind = type(exc).__name__
    if kind in ("PDFPasswordIncorrect", "PDFEncryptionError", "PDFEncryptionWarning"):
        return DrmProtected(
            f"'{name}' is a password-protected (encrypted) PDF; omni-web does not ask for passwords. "
            "Remove the protection with the program that made it, or use an unprotected copy."
        )
    return NotAnEpub(f"'{name}' is a damaged PDF and cannot be read ({kind}). Use another copy of the book.")


def _no_text(name: str, images: int, page_count: int) -> BookError:
    if images:
        return ScannedBook(
            f"'{name}' is a scanned PDF: its {page_count} page{'s' if page_count != 1 else ''} are pictures "
            "with no text layer, so it needs OCR first (e.g. ocrmypdf), then upload the OCR'd PDF."
        )
    return ScannedBook(f"'{name}' has no text layer at all (empty or drawn pages); it needs OCR first if it "
                       "shows text, or use another copy of the book.")


def read_pdf_pages(document: Any, *, name: str, max_seconds: float = MAX_PDF_SECONDS,
                   ) -> tuple[list[PageLines], int, CoverImage | None, dict[int, int]]:
    """Lines of every page, pictures seen, the first page's cover picture, page object id → index.

    Stops early when the first pages are pictures without text (a scan).
    """
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.layout import LAParams
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage

    manager = PDFResourceManager(caching=True)
    device = PDFPageAggregator(manager, laparams=LAParams(line_margin=0.5, boxes_flow=None))
    interpreter = PDFPageInterpreter(manager, device)
    deadline = time.monotonic() + max_seconds
    pages: list[PageLines] = []
    images, cover = 0, None
    page_ids: dict[int, int] = {}
    for index, page in enumerate(PDFPage.create_pages(document)):
        if index >= MAX_PDF_PAGES:
            raise UnsafeBook(f"'{name}' has more than {MAX_PDF_PAGES} pages; it was not read. Split it first.")
        if time.monotonic() > deadline:
            raise UnsafeBook(f"'{name}' took more than {max_seconds:.0f} s to lay out; it was not read. Use another "
                             "copy of the book (or split it).")
        interpreter.process_page(page)
        layout = device.get_result()
        lines, page_images = _page_lines(layout)
        images += len(page_images)
        if index == 0 and page_images:
            cover = _cover(page_images, layout)
        pages.append(PageLines(number=index, lines=tuple(lines), width=layout.width, height=layout.height))
        page_ids[page.pageid] = index
        if index + 1 == _SCAN_PROBE_PAGES and images and not any(p.lines for p in pages) \
                and not _middle_has_text(document, interpreter, device):
            break  # a scan: refuse in seconds, not after laying out a 400-page book of pictures
    return pages, images, cover, page_ids


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


def _page_lines(layout: Any) -> tuple[list[Line], list[Any]]:
    from pdfminer.layout import LTChar, LTFigure, LTImage, LTTextBox, LTTextLine

    lines: list[Line] = []
    images: list[Any] = []

    def visit(item: Any) -> None:
        if isinstance(item, LTTextLine):
            line = _line(item, LTChar)
            # a line drawn twice over itself (overprinted bold, a shadow) is read once
            if line is not None and not any(x.text == line.text and abs(x.x0 - line.x0) < 2 and abs(x.y0 - line.y0) < 2
                                             for x in lines[-8:]):
                lines.append(line)
        elif isinstance(item, LTTextBox | LTFigure) or hasattr(item, "__iter__") and not isinstance(item, LTImage):
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
    text = []
    marks, in_mark = 0, False
    drawn: dict[str, list[Any]] = {}
    for c in item:
        piece = c.get_text()
        if isinstance(c, char_type):
            if _overprinted(c, drawn.get(piece, ())):
                continue  # bold faked by printing each letter (or word) twice, a hair apart: "DDaattaa"
            drawn.setdefault(piece, []).append(c)
        # A note marker: a digit or symbol set small and raised ("word¹"), never read mid-sentence.
        if isinstance(c, char_type) and c.size < size * _SUPERSCRIPT_RATIO and (piece.isdigit() or piece in "*†‡§"):
            marks += not in_mark
            in_mark = True
            continue
        in_mark = False
        text.append(piece)
    joined = "".join(text).replace("\n", " ").strip()
    if not joined:
        return None
    bold = sum(1 for c in chars if _BOLD_RE.search(c.fontname)) * 2 > len(chars)
    italic = sum(1 for c in chars if _ITALIC_RE.search(c.fontname)) * 2 > len(chars)
    return Line(text=joined, size=size, x0=item.x0, x1=item.x1, y0=item.y0, y1=item.y1, marks=marks, bold=bold,
                italic=italic)


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


def _decode(value: Any) -> str:
    from pdfminer.pdftypes import resolve1
    from pdfminer.utils import decode_text

    value = resolve1(value)
    if isinstance(value, bytes):
        return " ".join(decode_text(value).replace("\x00", "").split())
    if isinstance(value, str):
        return " ".join(value.split())
    return ""


def _metadata(document: Any, *, fallback_title: str) -> BookMetadata:
    info = document.info[0] if document.info else {}
    title = _decode(info.get("Title"))
    author = _decode(info.get("Author"))
    date = _decode(info.get("CreationDate"))
    match = re.match(r"D?:?(\d{4})(\d{2})?(\d{2})?", date)
    day = "-".join(part for part in match.groups() if part) if match else ""
    language = ""
    try:
        from pdfminer.pdftypes import resolve1

        language = _decode(resolve1(document.catalog.get("Lang")))
    except Exception:  # noqa: BLE001 - a broken catalog entry only costs the language
        language = ""
    return BookMetadata(
        title=title or fallback_title,
        authors=tuple(a.strip() for a in re.split(r";|\s+and\s+|&", author) if a.strip()),
        language=language,
        description=_decode(info.get("Subject")),
        subjects=tuple(k.strip() for k in re.split(r"[;,]", _decode(info.get("Keywords"))) if k.strip())[:20],
        date=day,
        publisher="",
        identifier="",
    )


def _outline(document: Any) -> list[tuple[int, str, Any]]:
    """(level, title, destination page object) of each outline entry; [] without an outline."""
    from pdfminer.pdfdocument import PDFNoOutlines
    from pdfminer.pdftypes import resolve1

    entries = []
    try:
        for level, title, dest, action, _se in document.get_outlines():
            target = dest
            if target is None and action is not None:
                action = resolve1(action)
                if isinstance(action, dict) and str(getattr(action.get("S"), "name", "")) == "GoTo":
                    target = action.get("D")
            target = resolve1(target)
            if isinstance(target, bytes | str) or type(target).__name__ == "PSLiteral":
                name = target.name if type(target).__name__ == "PSLiteral" else target
                try:
                    target = resolve1(document.get_dest(name))
                except Exception:  # noqa: BLE001 - an unknown named destination: skip the entry
                    continue
            if isinstance(target, dict):
                target = resolve1(target.get("D"))
            if isinstance(target, list) and target:
                entries.append((level, _decode(title) if not isinstance(title, str) else " ".join(title.split()),
                                target))
    except PDFNoOutlines:
        return []
    except Exception:  # noqa: BLE001 - a broken outline costs the outline, not the book
        return []
    return entries


def _parts(pages: list[PageLines], outline: list[tuple[int, str, Any]], page_of: dict[int, int], *,
           notes: bool = False) -> list[Part]:
    body = body_size(pages)
    paras = paragraphs(pages, body=body, min_heading=_chapter_heading_min(pages, body), notes=notes)
    starts = _outline_starts(outline, paras, page_of)
    if starts:
        return _cut_at(paras, starts)
    return _cut_at_headings(paras)


def _chapter_heading_min(pages: list[PageLines], body: float) -> float:
    sizes = heading_sizes(pages, body)
    return sizes[-1] - 0.3 if sizes else body * 1.18  # sizes are rounded to 0.5 pt


def _outline_starts(outline: list[tuple[int, str, Any]], paras: list[TextPara],
                    page_of: dict[int, int]) -> list[tuple[int, str]]:
    """(paragraph index, title) where each chapter of the outline starts."""
    if not outline:
        return []
    levels = sorted({level for level, _, _ in outline})
    top = [e for e in outline if e[0] == levels[0]]
    if len(top) == 1 and len(levels) > 1:  # one entry for the whole book: its children are the chapters
        top = [e for e in outline if e[0] == levels[1]]
    starts = []
    for _, title, target in top:
        page = page_of.get(getattr(target[0], "objid", None))
        if page is None or not title:
            continue
        # /XYZ left top zoom: the height the viewer jumps to
        top_y = target[3] if len(target) > 3 and str(getattr(target[1], "name", "")) == "XYZ" else None
        starts.append((_find_start(paras, page, title, top_y if isinstance(top_y, int | float) else None), title))
    return sorted(set(starts))


def _find_start(paras: list[TextPara], page: int, title: str, top: float | None) -> int:
    """The paragraph where a chapter starts: its heading on ``page``, else the first one at or under
    the destination's height, else the page's first paragraph."""
    key = text_key(title)
    on_page = [(i, p) for i, p in enumerate(paras) if p.page == page]
    for prefer_headings in (True, False):
        for index, para in on_page:
            para_key = text_key(para.text)
            if prefer_headings and not para.is_heading:
                continue
            if para_key and key and (para_key.startswith(key) or key.startswith(para_key)
                                     or key in para_key[: len(key) + 4]):
                return index
    if top is not None:
        for index, para in on_page:
            if para.top <= top + 2:
                return index
    if on_page:
        return on_page[0][0]
    return next((i for i, p in enumerate(paras) if p.page >= page), len(paras))


def _cut_at(paras: list[TextPara], starts: list[tuple[int, str]]) -> list[Part]:
    parts = []
    first = starts[0][0]
    if first > 0:
        parts.append(Part(title="", blocks=_blocks(paras[:first])))
    for n, (start, title) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(paras)
        blocks = _blocks(paras[start:end])
        if blocks and text_key(blocks[0].text) == text_key(title):
            blocks = (heading(title), *blocks[1:])  # the title set as body text: said once, as the heading
        elif not blocks or not blocks[0].is_heading:
            blocks = (heading(title), *blocks)
        parts.append(Part(title=title, blocks=blocks))
    return parts


def _cut_at_headings(paras: list[TextPara]) -> list[Part]:
    """Without an outline: chapters at the largest heading size used at least twice."""
    counts: dict[float, int] = {}
    for para in paras:
        if para.is_heading:
            counts[round(para.size * 2) / 2] = counts.get(round(para.size * 2) / 2, 0) + 1
    repeated = sorted((s for s, c in counts.items() if c >= 2), reverse=True)
    if not repeated:
        paras, style_starts = _style_headings(paras)
        if style_starts:
            return _cut_at(paras, style_starts)
    starts = []
    for index, para in enumerate(paras):
        if para.is_heading and repeated and round(para.size * 2) / 2 == repeated[0]:
            starts.append((index, para.text))
        elif not para.is_heading and is_chapter_heading(para.text) and not repeated:
            starts.append((index, para.text))
    if not starts:
        return [Part(title="", blocks=_blocks(paras))]
    return _cut_at(paras, starts)


def _style_headings(paras: list[TextPara]) -> tuple[list[TextPara], list[tuple[int, str]]]:
    """Headings by style where none is set larger: a bold line alone, followed by body text.

    Such lines become headings; chapters start at the most prominent style (capitals, upright,
    size) used at least twice: the book's top level (a report's "INTRODUCTION" and "TITLE I: ..."
    set in small bold capitals above its larger mixed-case section titles).
    """
    def alone(para: TextPara) -> bool:
        return (para.bold and not para.is_heading and para.lines <= 2 and len(para.text.split()) <= _STYLE_HEADING_WORDS
                and not para.text.endswith((".", ",", ";")) and any(ch.isalpha() for ch in para.text))

    def body(i: int) -> bool:
        return i < len(paras) and not paras[i].bold and not paras[i].is_heading

    # Followed by body text, or by a subheading that is (a part title, then its first section's).
    found = [i for i, para in enumerate(paras) if alone(para)
             and (body(i + 1) or (i + 1 < len(paras) and alone(paras[i + 1]) and body(i + 2)))]
    if not found:
        return paras, []

    def style(para: TextPara) -> tuple[float, bool, bool]:
        return round(para.size * 2) / 2, para.text.isupper(), para.italic

    counts = Counter(style(paras[i]) for i in found)
    # The most prominent style used twice: capitals before mixed case, upright before italic,
    # then the larger size (a title set small in capitals outranks a larger mixed-case section).
    top = max((key for key, n in counts.items() if n >= 2), key=lambda k: (k[1], not k[2], k[0]), default=None)
    if top is None:
        return paras, []
    marked = list(paras)
    for i in found:
        marked[i] = dataclasses.replace(paras[i], is_heading=True)
    return marked, [(i, paras[i].text) for i in found if style(paras[i]) == top]


def _blocks(paras: list[TextPara]) -> tuple[TextBlock, ...]:
    return tuple(heading(p.text) if p.is_heading else paragraph(p.text) for p in paras)
