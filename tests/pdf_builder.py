"""Small PDFs with each trap a PDF reader meets, drawn line by line with reportlab (tests only).

``trap_book`` lays out a short novel the way a printed book is: a title page, running heads,
page numbers in the foot, words hyphenated at line ends, a paragraph running over a page break,
a footnote with its raised marker, a two-column page, and an outline (bookmarks) unless asked
not to. ``scanned_pdf`` is a page that is only a picture; ``encrypted_pdf`` needs a password.
"""

from __future__ import annotations

import io
from pathlib import Path

from reportlab.lib.pagesizes import A5
from reportlab.pdfgen import canvas

__all__ = ["CHAPTERS", "RUNNING_HEAD", "TITLE", "encrypted_pdf", "scanned_pdf", "trap_book"]

TITLE = "The Lighthouse Keeper"
RUNNING_HEAD = "THE LIGHTHOUSE KEEPER"
CHAPTERS = ("Chapter One: The Storm", "Chapter Two: The Letter", "Chapter Three: The Harbour")
_WIDTH, _HEIGHT = A5
_MARGIN = 50
_BODY = 11
_LEADING = 14

# (lines of chapter one, page one): a hyphenated "remark-able" and "light-house" at line ends,
# a footnote marker after "storm".
_CHAPTER_ONE = [
    ("The wind rose before dusk and the keeper climbed the", 0),
    ("stairs to trim the wick. It was a remark-", 0),
    ("able night, the sea black and the sky torn by the storm", 1),
    ("that had come in from the west.", 0),
    ("", 0),
    ("    He thought of his daughter in the town, and of the light-", 0),
    ("house that had stood for a hundred years on the rock.", 0),
]
_CHAPTER_TWO_PAGE_ONE = [
    ("A letter came with the supply boat on the first calm", 0),
    ("morning. The keeper read it twice at the window, then", 0),
    ("folded it into the pocket of his coat and went on with", 0),
]
_CHAPTER_TWO_PAGE_TWO = [
    ("the work of the day, which was the same as every day.", 0),
    ("", 0),
    ("    In the evening he wrote an answer by the lamp.", 0),
]
_LEFT_COLUMN = ["The harbour was full of boats", "when he came down at last,", "and the people on the quay",
                "waved to him as he passed.", "He had not been ashore", "since the spring."]
_RIGHT_COLUMN = ["His daughter stood at the end", "of the pier in a blue coat.", "She laughed when she saw",
                 "how his beard had grown.", "They walked home together", "in the last of the light."]


def _page_furniture(pdf: canvas.Canvas, number: int) -> None:
    pdf.setFont("Helvetica", 8)
    pdf.drawCentredString(_WIDTH / 2, _HEIGHT - 30, RUNNING_HEAD)
    pdf.drawCentredString(_WIDTH / 2, 25, f"- {number} -")


def _body(pdf: canvas.Canvas, lines: list[tuple[str, int]], top: float) -> float:
    y = top
    for text, marker in lines:
        pdf.setFont("Times-Roman", _BODY)
        pdf.drawString(_MARGIN, y, text)
        if marker:
            pdf.setFont("Times-Roman", 6)  # a raised note marker after the line's last word
            pdf.drawString(_MARGIN + pdf.stringWidth(text, "Times-Roman", _BODY) + 1, y + 5, str(marker))
        y -= _LEADING
    return y


def _heading(pdf: canvas.Canvas, title: str, key: str, *, outline: bool, y: float) -> None:
    pdf.setFont("Helvetica-Bold", 18)
    pdf.drawString(_MARGIN, y, title)
    if outline:
        pdf.bookmarkPage(key, fit="XYZ", top=y + 20)
        pdf.addOutlineEntry(title, key, level=0)


def trap_book(path: Path, *, outline: bool = True) -> Path:
    """Write the six-page trap book at ``path`` (with or without bookmarks) and return it."""
    pdf = canvas.Canvas(str(path), pagesize=A5)
    pdf.setTitle(TITLE)
    pdf.setAuthor("Ada Lovelace-Byron")
    pdf.setSubject("A short test novel")
    pdf.setFont("Helvetica-Bold", 26)
    pdf.drawCentredString(_WIDTH / 2, _HEIGHT / 2 + 40, TITLE)
    pdf.setFont("Helvetica", 14)
    pdf.drawCentredString(_WIDTH / 2, _HEIGHT / 2, "by Ada Lovelace-Byron")
    pdf.showPage()
    top = _HEIGHT - 120
    # Chapter one, with a footnote in small print at the foot.
    _page_furniture(pdf, 2)
    _heading(pdf, CHAPTERS[0], "c1", outline=outline, y=_HEIGHT - 90)
    _body(pdf, _CHAPTER_ONE, top)
    pdf.setFont("Times-Roman", 7)
    pdf.drawString(_MARGIN, 60, "1 The great gale of that winter is remembered on the coast still.")
    pdf.showPage()
    # Chapter two: its first paragraph runs over the page break.
    _page_furniture(pdf, 3)
    _heading(pdf, CHAPTERS[1], "c2", outline=outline, y=_HEIGHT - 90)
    _body(pdf, _CHAPTER_TWO_PAGE_ONE, top)
    pdf.showPage()
    _page_furniture(pdf, 4)
    _body(pdf, _CHAPTER_TWO_PAGE_TWO, _HEIGHT - 70)
    pdf.showPage()
    # Chapter three on a two-column page.
    _page_furniture(pdf, 5)
    _heading(pdf, CHAPTERS[2], "c3", outline=outline, y=_HEIGHT - 90)
    pdf.setFont("Times-Roman", 10)
    for n, (left, right) in enumerate(zip(_LEFT_COLUMN, _RIGHT_COLUMN, strict=True)):
        y = top - n * 13
        pdf.drawString(_MARGIN - 15, y, left)
        pdf.drawString(_WIDTH / 2 + 8, y, right)
    pdf.showPage()
    _page_furniture(pdf, 6)
    pdf.setFont("Times-Roman", _BODY)
    pdf.drawString(_MARGIN, _HEIGHT - 70, "The end of the story came with the spring.")
    pdf.showPage()
    pdf.save()
    return path


def scanned_pdf(path: Path, *, pages: int = 3, text_pages: int = 0) -> Path:
    """Pages that are only pictures (a photographed page of 'text'), no text layer; then
    ``text_pages`` pages of real text (a book whose front is pictures)."""
    from PIL import Image, ImageDraw

    picture = Image.new("RGB", (600, 850), "white")
    draw = ImageDraw.Draw(picture)
    for row in range(40, 800, 24):
        draw.rectangle((40, row, 560, row + 10), fill="black")  # lines of "print"
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG", quality=60)
    pdf = canvas.Canvas(str(path), pagesize=A5)
    from reportlab.lib.utils import ImageReader

    reader = ImageReader(io.BytesIO(buffer.getvalue()))
    for _ in range(pages):
        pdf.drawImage(reader, 0, 0, width=_WIDTH, height=_HEIGHT)
        pdf.showPage()
    openings = (
        "The text begins after the plates.",
        "Morning came grey over the hills.",
        "Nobody answered the door.",
        "A cart went by on the road.",
        "Rain fell all that week.",
        "The letter was never sent.",
    )
    for number in range(text_pages):
        pdf.setFont("Times-Roman", _BODY)
        for row, line in enumerate(
            (
                openings[number % len(openings)],
                "It goes on for a while,",
                f"and this is page {number + 1} of it.",
            )
        ):
            pdf.drawString(_MARGIN, _HEIGHT - 80 - row * _LEADING, line)
        pdf.showPage()
    pdf.save()
    return path


def encrypted_pdf(path: Path) -> Path:
    """A one-page text PDF that opens only with a password."""
    from reportlab.lib import pdfencrypt

    pdf = canvas.Canvas(
        str(path),
        pagesize=A5,
        encrypt=pdfencrypt.StandardEncryption("secret", ownerPassword="owner", strength=128),
    )
    pdf.setFont("Times-Roman", _BODY)
    pdf.drawString(_MARGIN, _HEIGHT - 80, "Nobody may read this without the password.")
    pdf.showPage()
    pdf.save()
    return path
