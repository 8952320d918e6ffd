"""``<Title>.readalong.epub``: the original book with EPUB 3 Media Overlays of its rendered chapters.

The book's files are copied as they are, except: each spoken sentence of a rendered chapter is
wrapped in ``<span id=...>`` (see :mod:`omni_web.readalong.xhtml`); the OPF lists one SMIL per
chapter (chapters that share a page share one SMIL, since a page can have only one overlay), the
chapter audio as AAC, ``media:duration`` per overlay and in total, and ``media:active-class`` (with a
CSS rule that makes it visible, see :mod:`omni_web.readalong.style`); an
EPUB 2 book is lifted to EPUB 3 (overlays exist only there), with a navigation document made from
its NCX.
"""

from __future__ import annotations

import posixpath
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from lxml import etree

from omni_web.errors import BookError
from omni_web.files import atomic_path
from omni_web.readalong.audio import CODECS, AudioCodec
from omni_web.readalong.package import (
    HTML5_DOCTYPE,
    OPF_NS,
    Package,
    lift_xhtml,
    parse_document,
    read_package,
)
from omni_web.readalong.records import ChapterTimings
from omni_web.readalong.style import add_highlight_rule
from omni_web.readalong.tidy import add_accessibility, ensure_head_title, unwrap_switches
from omni_web.readalong.xhtml import (
    DocumentText,
    document_text,
    existing_ids,
    place_sentences,
    wrap_sentences,
)

__all__ = ["ACTIVE_CLASS", "OverlayChapter", "ReadalongEpub", "clock_value", "write_readalong_epub"]

ACTIVE_CLASS = "-epub-media-overlay-active"
_SMIL_NS = "http://www.w3.org/ns/SMIL"
_EPUB_NS = "http://www.idpf.org/2007/ops"
_DC = "http://purl.org/dc/elements/1.1/"
_FOLDER = "readalong"  # new files go in <opf dir>/readalong/


@dataclass(frozen=True, slots=True)
class OverlayChapter:
    """A rendered chapter: its timings, where it starts in the book, and where the next one starts."""

    timings: ChapterTimings
    source_href: str  # relative to the OPF, "page.xhtml#anchor"
    next_href: str | None  # the book's next chapter (rendered or not); None after the last


@dataclass(frozen=True, slots=True)
class ReadalongEpub:
    """What was written."""

    path: Path
    overlays: int
    sentences: int
    placed: int  # sentences found in the text and wrapped
    duration_s: float
    # Chapter number -> sentence index -> the sentence as the book prints it (not its spoken form).
    written: dict[int, dict[int, str]] = field(default_factory=dict)

    @property
    def placed_share(self) -> float:
        """Share of the spoken sentences that the overlays point at."""
        return self.placed / self.sentences if self.sentences else 0.0


def clock_value(seconds: float) -> str:
    """A SMIL clock value, ``H:MM:SS.mmm``."""
    ms = max(0, round(seconds * 1000))
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    return f"{hours}:{minutes:02d}:{ms // 1000:02d}.{ms % 1000:03d}"


def _window(package: Package, chapter: OverlayChapter) -> list[str]:
    """The spine pages a chapter's text can be on: from its page to the next chapter's page."""
    spine = package.spine_paths()
    start = package.path_of(chapter.source_href.partition("#")[0])
    if start not in spine:
        return []
    first = spine.index(start)
    last = len(spine)
    if chapter.next_href:
        path, _, fragment = chapter.next_href.partition("#")
        nxt = package.path_of(path)
        if nxt in spine and spine.index(nxt) >= first:
            last = spine.index(nxt) + (1 if fragment or spine.index(nxt) == first else 0)
    return spine[first:last]


def _ranges(package: Package, chapter: OverlayChapter, names: list[str],
            pages: dict[str, DocumentText]) -> list[tuple[int, int | None]]:
    """Per page of a chapter's window, the stream range its text is in: from the chapter's anchor
    on its first page, up to the next chapter's anchor on the page where that one starts."""
    ranges: list[tuple[int, int | None]] = [(0, None) for _ in names]
    path, _, fragment = chapter.source_href.partition("#")
    start_page = package.path_of(path)
    if names and names[0] == start_page:
        ranges[0] = (pages[start_page].offset_of(fragment) or 0, None)
    if chapter.next_href:
        path, _, fragment = chapter.next_href.partition("#")
        next_page = package.path_of(path)
        end = pages[next_page].offset_of(fragment) if next_page in names else None
        if end is not None:
            n = names.index(next_page)
            ranges[n] = (ranges[n][0], end) if end > ranges[n][0] else ranges[n]
    return ranges


def _groups(windows: list[set[str]]) -> list[list[int]]:
    """Chapters whose sentences share a page, joined (each group becomes one SMIL)."""
    groups: list[list[int]] = []
    pages: list[set[str]] = []
    for n, window in enumerate(windows):
        if groups and pages[-1] & set(window):
            groups[-1].append(n)
            pages[-1] |= set(window)
        else:
            groups.append([n])
            pages.append(set(window))
    return groups


@dataclass
class _Par:
    page: str
    fragment: str
    begin: float
    end: float


def _pars(timings: ChapterTimings, placed: dict[int, tuple[str, str]], audio_s: float) -> list[_Par]:
    """One par per placed sentence, their clips tiling the chapter's audio from 0 to its end.

    Each clip runs from its sentence's start to the next placed sentence's start, so the pause
    after a sentence plays with it (the overlay sounds like the audiobook, nothing is skipped) and
    a sentence with no text to point at plays with the one before it. The audio before the first
    placed sentence (a lead-in, room tone, or a spoken chapter title the page does not print:
    chunking speaks the title exactly when the chapter does not open with it) plays with the
    first par, so its text is highlighted from the chapter's first moment.
    """
    starts: list[tuple[float, tuple[str, str]]] = []
    for sentence in timings.sentences:
        where = placed.get(sentence.index)
        if where is not None:
            starts.append((min(max(0.0, sentence.start_s), audio_s), where))
    pars: list[_Par] = []
    for n, (start, (page, fragment)) in enumerate(starts):
        begin = 0.0 if n == 0 else start
        end = starts[n + 1][0] if n + 1 < len(starts) else audio_s
        if end > begin:  # a sentence of no length (times that met) is left to its neighbours
            pars.append(_Par(page, fragment, begin, end))
        elif pars:
            pars[-1].end = max(pars[-1].end, end)
    return pars


def _smil(seqs: list[tuple[str, list[_Par]]], smil_path: str) -> bytes:
    """A SMIL document: one ``seq`` per chapter (audio, pars)."""
    smil = etree.Element(f"{{{_SMIL_NS}}}smil", {"version": "3.0"}, nsmap={None: _SMIL_NS, "epub": _EPUB_NS})
    body = etree.SubElement(smil, f"{{{_SMIL_NS}}}body")
    base = posixpath.dirname(smil_path)
    counter = 0
    for audio_path, pars in seqs:
        seq = etree.SubElement(body, f"{{{_SMIL_NS}}}seq", {
            f"{{{_EPUB_NS}}}textref": f"{quote(posixpath.relpath(pars[0].page, base))}#{pars[0].fragment}",
            f"{{{_EPUB_NS}}}type": "chapter"})
        audio_src = quote(posixpath.relpath(audio_path, base))
        for par in pars:
            counter += 1
            node = etree.SubElement(seq, f"{{{_SMIL_NS}}}par", {"id": f"par{counter}"})
            etree.SubElement(node, f"{{{_SMIL_NS}}}text",
                             {"src": f"{quote(posixpath.relpath(par.page, base))}#{par.fragment}"})
            etree.SubElement(node, f"{{{_SMIL_NS}}}audio", {
                "src": audio_src, "clipBegin": f"{par.begin:.3f}s", "clipEnd": f"{par.end:.3f}s"})
    return etree.tostring(smil, xml_declaration=True, encoding="utf-8")


def _load_pages(archive: zipfile.ZipFile, paths: list[str]) -> dict[str, DocumentText]:
    pages: dict[str, DocumentText] = {}
    for path in dict.fromkeys(paths):
        try:
            pages[path] = document_text(parse_document(archive.read(path)))
        except (KeyError, etree.XMLSyntaxError):
            continue  # a page that is not well-formed XHTML keeps its text unmarked
    return pages


def write_readalong_epub(
    source: Path,
    chapters: Sequence[OverlayChapter],
    out_path: Path,
    *,
    bitrate_kbps: int = 64,
    narrator: str = "",
    encode: Callable[[Path, Path], float] | None = None,
    codec: str = "aac",
) -> ReadalongEpub:
    """Write the read-along EPUB for ``chapters`` (in book order) of the book at ``source``.

    Args:
        encode: ``(chapter audio, out file) -> duration_s``; default the ``codec``'s encoder.
        codec: ``"aac"`` (AAC in ``.m4a`` at ``bitrate_kbps``) or ``"opus"`` (Opus in Ogg at its own
            speech rate, about half the size; for EPUB 3.3 readers).

    Raises:
        BookError: the source book cannot be read or has no chapter to overlay.
        FfmpegError, DiskFullError: encoding the audio failed.
    """
    kind = CODECS[codec]
    rate = bitrate_kbps if codec == "aac" else kind.bitrate_kbps
    encoder = encode or (lambda src, dst: kind.encode(src, dst, bitrate_kbps=rate))
    out_path = Path(out_path)
    try:
        archive = zipfile.ZipFile(source)
    except (OSError, zipfile.BadZipFile) as exc:
        raise BookError(f"Cannot read the book {source} to make its read-along EPUB ({exc}).") from exc
    with archive, tempfile.TemporaryDirectory(prefix="readalong-", dir=out_path.parent) as scratch:
        package = read_package(archive)
        ncx_item = next((i for i in package.items.values() if i.media_type == "application/x-dtbncx+xml"),
                        None)
        folder = posixpath.join(package.opf_dir, _FOLDER) if package.opf_dir else _FOLDER
        nav = package.upgrade_to_epub3(archive.read(ncx_item.path) if ncx_item else None,
                                       f"{folder}/nav.xhtml")
        windows = [_window(package, chapter) for chapter in chapters]
        pages = _load_pages(archive, [p for w in windows for p in w])
        ranges, chapter_places, written = _place_chapters(package, chapters, windows, pages)
        chapter_places = _wrap_ranges(pages, ranges, chapter_places)
        files: dict[str, bytes | Path] = {}
        all_marked, total_s, overlays, placed = _add_overlays(
            package, chapters, chapter_places, files, folder=folder, scratch=Path(scratch), encoder=encoder,
            codec=kind)
        if not overlays:
            raise BookError("None of the rendered chapters' sentences were found in the book's pages, so no "
                            "read-along EPUB was written.")
        package.add_meta("media:duration", clock_value(total_s))
        package.add_meta("media:active-class", ACTIVE_CLASS)
        add_highlight_rule(package, archive, {p: pages[p].root for p in all_marked}, all_marked, files,
                           active_class=ACTIVE_CLASS, own_css_path=f"{folder}/readalong.css")
        if narrator:
            package.add_meta("media:narrator", narrator)
        add_accessibility(package, narrator=narrator)
        package.touch_modified()
        for page in ranges:
            if unwrap_switches(pages[page].root):
                _drop_property(package, page, "switch")
            files[page] = _serialise(pages[page].root, lifted=nav is not None)
        _title_nav(archive, package, files)
        if nav is not None:
            _lift_pages(archive, package, files)
        files[package.opf_path] = package.to_bytes()
        if nav is not None:
            files[f"{folder}/nav.xhtml"] = nav
        _write_zip(archive, files, out_path)
    sentences = sum(len(c.timings.sentences) for c in chapters)
    return ReadalongEpub(out_path, overlays, sentences, placed, total_s, written)


_Ranges = dict[str, list[tuple[int, int, str]]]  # page -> (start, end, span id) in its text stream
_Places = list[dict[int, tuple[str, str]]]  # per chapter: sentence index -> (page, span id)


def _place_chapters(
    package: Package,
    chapters: Sequence[OverlayChapter],
    windows: list[list[str]],
    pages: dict[str, DocumentText],
) -> tuple[_Ranges, _Places, dict[int, dict[int, str]]]:
    """Find each chapter's sentences in its pages; returns the ranges to wrap, where each sentence
    went, and the printed text each placed sentence matched (per chapter number)."""
    ids_taken = {path: existing_ids(doc.root) for path, doc in pages.items()}
    ranges: _Ranges = {}
    chapter_places: _Places = []
    written: dict[int, dict[int, str]] = {}
    for chapter, window in zip(chapters, windows, strict=True):
        docs = [pages[p] for p in window if p in pages]
        names = [p for p in window if p in pages]
        texts = [s.text for s in chapter.timings.sentences]
        places: dict[int, tuple[str, str]] = {}
        bounds = _ranges(package, chapter, names, pages)
        for placement in place_sentences(texts, docs, ranges=bounds) if docs else []:
            page = names[placement.document]
            span_id = f"ra{chapter.timings.number:03d}s{placement.sentence + 1:04d}"
            while span_id in ids_taken[page]:
                span_id += "x"
            ids_taken[page].add(span_id)
            ranges.setdefault(page, []).append((placement.start, placement.end, span_id))
            places[chapter.timings.sentences[placement.sentence].index] = (page, span_id)
            printed = " ".join(pages[page].stream[placement.start : placement.end].split())
            written.setdefault(chapter.timings.number, {})[placement.sentence] = printed
        chapter_places.append(places)
    return ranges, chapter_places, written


def _wrap_ranges(pages: dict[str, DocumentText], ranges: _Ranges, chapter_places: _Places) -> _Places:
    """Wrap the placed sentences in spans; returns the places whose span was written."""
    wrapped: dict[str, bool] = {}
    for page, page_ranges in ranges.items():
        kept, reach = [], -1
        for start, end, span_id in sorted(page_ranges):
            if start >= reach:  # two chapters on one page may claim the same text: first wins
                kept.append((start, end, span_id))
                reach = end
        wrapped.update(wrap_sentences(pages[page], kept))
    return [{k: v for k, v in places.items() if wrapped.get(v[1])} for places in chapter_places]


def _add_overlays(
    package: Package,
    chapters: Sequence[OverlayChapter],
    chapter_places: _Places,
    files: dict[str, bytes | Path],
    *,
    folder: str,
    scratch: Path,
    encoder: Callable[[Path, Path], float],
    codec: AudioCodec = CODECS["aac"],
) -> tuple[list[str], float, int, int]:
    """Encode the chapters' audio and write one SMIL per group of chapters sharing pages into
    ``files`` and the package; returns the marked pages, the audio length, overlays and sentences placed."""
    all_marked: list[str] = []
    total_s = 0.0
    overlays = 0
    placed = 0
    for group in _groups([{page for page, _ in places.values()} for places in chapter_places]):
        seqs = []
        marked_pages: list[str] = []
        group_s = 0.0
        first_number = chapters[group[0]].timings.number
        smil_path = f"{folder}/chapter-{first_number:03d}.smil"
        for n in group:
            chapter = chapters[n]
            if not chapter_places[n]:
                continue
            audio_path = f"{folder}/chapter-{chapter.timings.number:03d}{codec.extension}"
            encoded = scratch / f"chapter-{chapter.timings.number:03d}{codec.extension}"
            audio_s = encoder(Path(chapter.timings.audio_path), encoded)
            pars = _pars(chapter.timings, chapter_places[n], audio_s)
            if not pars:
                continue
            files[audio_path] = encoded
            package.add_item(f"ra-audio-{chapter.timings.number:03d}", audio_path, codec.media_type)
            seqs.append((audio_path, pars))
            marked_pages += [p.page for p in pars if p.page not in marked_pages]
            group_s += sum(round(p.end - p.begin, 3) for p in pars)
            placed += len(pars)
        if not seqs:
            continue
        all_marked += [p for p in marked_pages if p not in all_marked]
        files[smil_path] = _smil(seqs, smil_path)
        smil_id = package.add_item(f"ra-smil-{first_number:03d}", smil_path, "application/smil+xml")
        for page in marked_pages:
            item = package.item_by_path(page)
            if item is not None:
                item.element.set("media-overlay", smil_id)
        package.add_meta("media:duration", clock_value(group_s), refines=f"#{smil_id}")
        total_s += group_s
        overlays += 1
    return all_marked, total_s, overlays, placed


def _serialise(root: etree._Element, *, lifted: bool) -> bytes:
    tree = root.getroottree()
    if lifted:
        lift_xhtml(root)
        return etree.tostring(tree, xml_declaration=True, encoding="utf-8", doctype=HTML5_DOCTYPE)
    return etree.tostring(tree, xml_declaration=True, encoding="utf-8")


def _drop_property(package: Package, path: str, name: str) -> None:
    """Remove ``name`` from a manifest item's ``properties`` (the page no longer has the feature)."""
    item = package.item_by_path(path)
    if item is None:
        return
    kept = [p for p in (item.element.get("properties") or "").split() if p != name]
    if kept:
        item.element.set("properties", " ".join(kept))
    elif "properties" in item.element.attrib:
        del item.element.attrib["properties"]


def _title_nav(archive: zipfile.ZipFile, package: Package, files: dict[str, bytes | Path]) -> None:
    """The book's own navigation document gets a ``<title>`` when it lacks one."""
    for item in package.items.values():
        if "nav" not in (item.element.get("properties") or "").split():
            continue
        data = files.get(item.path)
        try:
            root = parse_document(data if isinstance(data, bytes) else archive.read(item.path))
        except (KeyError, etree.XMLSyntaxError):
            continue
        if ensure_head_title(root, package.root.findtext(f"{{{OPF_NS}}}metadata/{{{_DC}}}title") or ""):
            files[item.path] = _serialise(root, lifted=True)


def _lift_pages(archive: zipfile.ZipFile, package: Package, files: dict[str, bytes | Path]) -> None:
    """An EPUB 2 book lifted to EPUB 3: its other XHTML pages get the HTML5 doctype too."""
    for item in package.items.values():
        if item.media_type != "application/xhtml+xml" or item.path in files:
            continue
        try:
            files[item.path] = _serialise(parse_document(archive.read(item.path)), lifted=True)
        except (KeyError, etree.XMLSyntaxError):
            continue


def _write_zip(archive: zipfile.ZipFile, files: dict[str, bytes | Path], out_path: Path) -> None:
    """The new book: ``mimetype`` first and stored, every other entry copied or replaced."""
    with atomic_path(out_path, suffix=".epub") as staged, zipfile.ZipFile(staged, "w") as out:
        out.writestr(zipfile.ZipInfo("mimetype"), b"application/epub+zip", compress_type=zipfile.ZIP_STORED)
        for info in archive.infolist():
            if info.filename == "mimetype" or info.is_dir():
                continue
            data = files.pop(info.filename, None)
            if isinstance(data, Path):
                out.write(data, info.filename, compress_type=zipfile.ZIP_STORED)
            else:
                out.writestr(
                    info.filename,
                    data if data is not None else archive.read(info.filename),
                    compress_type=zipfile.ZIP_DEFLATED,
                )
        for name, data in files.items():
            if isinstance(data, Path):
                out.write(data, name, compress_type=zipfile.ZIP_STORED)  # AAC does not compress
            else:
                out.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
