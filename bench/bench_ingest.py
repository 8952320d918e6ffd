"""Benchmark: parse and chunk books (EPUB fixtures and synthetic EPUBs of growing size; PDFs in pages/s).

Prints plain lines: median seconds to load and chunk (several runs), chunks per second, and the
peak RSS of a fresh process doing the work, so scaling with book size is visible. PDFs (the
outlined fixture, then a synthetic novel of ``--pdf-pages`` pages with running heads and page
numbers, drawn with reportlab from requirements-dev.txt) print pages per second of the whole read:
layout analysis, head/foot removal, paragraphs, chapters. Then the real PDFs of the corpus with 10
pages or more, in pages per CPU-second (user + system of the reading process, not wall time: the
machine may be shared), and the CLI's start: CPU seconds of ``python -m omni_web --help`` and of
``chapters`` on a small PDF, each a fresh interpreter (the target: under 1 s). Not a test.

    .venv/bin/python bench/bench_ingest.py [--runs 5] [--sizes-mb 0.5 1 2 4] [--pdf-pages 200] [--pdf-only]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from omni_web.book import chunk_chapter, load_book  # noqa: E402

DATA_DIR = ROOT / "tests" / "data"
CHUNK_SETTINGS = ((120, None, 4096), (80, 80, 4096))  # app default; a per-request word cap


def measure(path: Path, runs: int) -> dict[str, float]:
    """Load and chunk ``path`` ``runs`` times in this process; median timings and peak RSS."""
    load_s, chunk_s, cpu_s = [], [], []
    chunks = words = 0
    for _ in range(runs):
        start = time.perf_counter()
        cpu = time.process_time()
        book = load_book(path)
        cpu_s.append(time.process_time() - cpu)
        loaded = time.perf_counter()
        chunks = 0
        for chunk_words, max_words, max_chars in CHUNK_SETTINGS:
            for chapter in book.chapters:
                chunks += len(
                    chunk_chapter(chapter, chunk_words=chunk_words, max_words=max_words, max_chars=max_chars)
                )
        load_s.append(loaded - start)
        chunk_s.append(time.perf_counter() - loaded)
        words = book.word_count
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "load_s": statistics.median(load_s),
        "load_cpu_s": statistics.median(cpu_s),
        "chunk_s": statistics.median(chunk_s),
        "chunks": chunks,
        "words": words,
        "peak_rss_mib": peak_kib / 1024,
    }


def measure_in_child(path: Path, runs: int) -> dict[str, float]:
    """Run :func:`measure` in a fresh interpreter so each peak RSS belongs to one book."""
    result = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, __file__, "--child", str(path), "--runs", str(runs)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def synthetic_book(path: Path, target_bytes: int) -> int:
    """Write an EPUB of about ``target_bytes`` of XHTML, from the fixtures' own paragraphs."""
    paragraphs: list[str] = []
    for fixture in ("pg11-alice.epub", "childrens-literature.epub", "wasteland.epub"):
        for chapter in load_book(DATA_DIR / fixture).chapters:
            if chapter.selected_by_default:
                paragraphs.extend(block.text for block in chapter.blocks if not block.is_heading)
    docs: list[str] = []
    size = 0
    index = 0
    while size < target_bytes:
        body = [f"<h1>Chapter {len(docs) + 1}</h1>"]
        chapter_bytes = 0
        while chapter_bytes < 60_000:  # ~60 kB per chapter file, like a typical novel chapter
            text = escape(paragraphs[index % len(paragraphs)])
            body.append(f"<p>{text}</p>")
            chapter_bytes += len(text) + 7
            index += 7  # stride through the paragraphs so files do not repeat verbatim
        page = (
            '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
            f"<head><title>c</title></head><body>{''.join(body)}</body></html>"
        )
        docs.append(page)
        size += len(page.encode())
    manifest = "".join(
        f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>' for i in range(len(docs))
    )
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(docs)))
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
        'unique-identifier="u">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="u">bench</dc:identifier>'
        "<dc:title>Bench</dc:title><dc:language>en</dc:language></metadata>"
        f"<manifest>{manifest}</manifest><spine>{spine}</spine></package>"
    )
    container = (
        '<?xml version="1.0"?><container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
        '<rootfiles><rootfile full-path="content.opf" '
        'media-type="application/oebps-package+xml"/></rootfiles>'
        "</container>"
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr("META-INF/container.xml", container)
        archive.writestr("content.opf", opf)
        for i, page in enumerate(docs):
            archive.writestr(f"c{i}.xhtml", page)
    return size


def _report(label: str, xhtml_bytes: int, numbers: dict[str, float]) -> None:
    total = numbers["load_s"] + numbers["chunk_s"]
    mb = xhtml_bytes / 1e6
    print(
        f"{label:34} {mb:6.2f} MB xhtml  {int(numbers['words']):>8} words  "
        f"load {numbers['load_s']:6.3f} s  chunk {numbers['chunk_s']:6.3f} s  "
        f"{total / mb:6.3f} s/MB  {numbers['chunks'] / numbers['chunk_s']:9.0f} chunks/s  "
        f"peak RSS {numbers['peak_rss_mib']:6.1f} MiB"
    )


def _xhtml_bytes(path: Path) -> int:
    with zipfile.ZipFile(path) as archive:
        return sum(
            i.file_size for i in archive.infolist() if i.filename.endswith((".xhtml", ".html", ".htm"))
        )


def synthetic_pdf(path: Path, pages: int) -> int:
    """A novel of ``pages`` A5 pages: a chapter every 10 pages (bookmarked), running head, folio."""
    from reportlab.lib.pagesizes import A5
    from reportlab.pdfgen import canvas

    words = []
    for chapter in load_book(DATA_DIR / "pg11-alice.epub").chapters:
        if chapter.selected_by_default:
            words += " ".join(block.text for block in chapter.blocks if not block.is_heading).split()
    width, height = A5
    pdf = canvas.Canvas(str(path), pagesize=A5)
    index = 0
    for page in range(pages):
        pdf.setFont("Helvetica", 8)
        pdf.drawCentredString(width / 2, height - 30, "ALICE'S ADVENTURES IN WONDERLAND")
        pdf.drawCentredString(width / 2, 25, str(page + 1))
        y = height - 60
        if page % 10 == 0:
            pdf.setFont("Helvetica-Bold", 18)
            pdf.drawString(50, y, f"Chapter {page // 10 + 1}")
            pdf.bookmarkPage(f"c{page}")
            pdf.addOutlineEntry(f"Chapter {page // 10 + 1}", f"c{page}", level=0)
            y -= 40
        pdf.setFont("Times-Roman", 11)
        while y > 50:
            line = []
            while len(" ".join(line)) < 55:
                line.append(words[index % len(words)])
                index += 1
            pdf.drawString(50, y, " ".join(line))
            y -= 14
        pdf.showPage()
    pdf.save()
    return pages


def _report_pdf(label: str, pages: int, numbers: dict[str, float]) -> None:
    print(
        f"PDF {label:30} {pages:5d} pages  load {numbers['load_s']:7.2f} s  {pages / numbers['load_s']:6.1f} "
        "pages/s  "
        f"{int(numbers['words']):>7} words  peak RSS {numbers['peak_rss_mib']:6.1f} MiB"
    )


def real_pdfs(runs: int) -> None:
    """Pages per CPU-second of the corpus PDFs of 10 pages or more (text books, papers)."""
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser

    for path in sorted((DATA_DIR / "corpus" / "pdf").glob("*.pdf")):
        try:
            with path.open("rb") as handle:
                pages = sum(1 for _ in PDFPage.create_pages(PDFDocument(PDFParser(handle))))
        except Exception:  # noqa: BLE001 - damaged corpus files are not timed
            continue
        if pages < 10:
            continue
        try:
            numbers = measure_in_child(path, runs)
        except subprocess.CalledProcessError:
            continue  # refused (a scan): nothing laid out to time
        print(
            f"PDF {path.name:40} {pages:4d} pages  CPU {numbers['load_cpu_s']:6.2f} s  "
            f"{pages / numbers['load_cpu_s']:6.1f} pages per CPU-second  {int(numbers['words']):>6} words"
        )


def cli_start_cpu(runs: int) -> None:
    """CPU seconds (user + system) of a fresh ``python -m omni_web`` for --help and chapters."""
    small = DATA_DIR / "pdfminer-pagelabels.pdf"
    for label, argv in (("--help", ["--help"]), (f"chapters {small.name}", ["chapters", str(small)])):
        spent = []
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(
                [sys.executable, "-m", "omni_web", *argv],
                cwd=ROOT,
                capture_output=True,  # noqa: S603
                check=True,
            )
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            spent.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        print(
            f"CLI start  python -m omni_web {label:34} CPU {statistics.median(spent):5.2f} s "
            f"(median of {runs}; target < 1 s)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes-mb", type=float, nargs="*", default=[0.5, 1.0, 2.0, 4.0])
    parser.add_argument("--pdf-pages", type=int, default=200, help="pages of the synthetic PDF (0: none)")
    parser.add_argument("--pdf-only", action="store_true", help="only the real PDFs and the CLI start")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.runs)))
        return 0
    if args.pdf_only:
        real_pdfs(max(1, args.runs // 2))
        cli_start_cpu(args.runs)
        return 0
    baseline = measure_in_child(DATA_DIR / "hefty-water.epub", 1)
    print(f"interpreter + imports + tiny book: peak RSS {baseline['peak_rss_mib']:.1f} MiB")
    largest = max(DATA_DIR.glob("*.epub"), key=_xhtml_bytes)
    _report(f"fixture {largest.name}", _xhtml_bytes(largest), measure_in_child(largest, args.runs))
    with tempfile.TemporaryDirectory() as tmp:
        for size_mb in args.sizes_mb:
            path = Path(tmp) / f"synthetic-{size_mb}MB.epub"
            synthetic_book(path, int(size_mb * 1e6))
            _report(
                f"synthetic {size_mb} MB", _xhtml_bytes(path), measure_in_child(path, max(1, args.runs // 2))
            )
        _report_pdf(
            "fixture pdfminer-pagelabels.pdf",
            5,
            measure_in_child(DATA_DIR / "pdfminer-pagelabels.pdf", args.runs),
        )
        if args.pdf_pages:
            path = Path(tmp) / f"synthetic-{args.pdf_pages}-pages.pdf"
            pages = synthetic_pdf(path, args.pdf_pages)
            _report_pdf(f"synthetic {pages} pages", pages, measure_in_child(path, max(1, args.runs // 2)))
    real_pdfs(max(1, args.runs // 2))
    cli_start_cpu(args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
