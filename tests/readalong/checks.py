"""Checks the read-along tests share: epubcheck, and the SMIL ↔ XHTML ↔ audio consistency."""

from __future__ import annotations

import posixpath
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

from lxml import etree

from omni_web.assemble import probe_duration_ms

EPUBCHECK_JAR = Path("/usr/share/java/epubcheck.jar")
_SMIL = "{http://www.w3.org/ns/SMIL}"
_OPF = "{http://www.idpf.org/2007/opf}"
_CLOCK_RE = re.compile(r"^(\d+(?:\.\d+)?)s$")


def epubcheck_errors(epub: Path) -> list[str]:
    """epubcheck's ERROR and FATAL lines (run as ``java -jar``: its /usr/bin link needs binfmt)."""
    assert shutil.which("java") and EPUBCHECK_JAR.is_file(), (
        "install Debian's epubcheck (scripts/test.sh does)"
    )
    done = subprocess.run(
        ["java", "-jar", str(EPUBCHECK_JAR), str(epub)], capture_output=True, text=True, timeout=600
    )
    lines = (done.stdout + done.stderr).splitlines()
    return [line for line in lines if line.startswith(("ERROR", "FATAL"))]


def _seconds(value: str) -> float:
    match = _CLOCK_RE.match(value)
    assert match, f"clip value {value!r} is not in seconds"
    return float(match.group(1))


def _package(archive: zipfile.ZipFile) -> tuple[str, etree._Element]:
    container = etree.fromstring(archive.read("META-INF/container.xml"))
    opf_path = next(e.get("full-path") for e in container.iter() if e.get("full-path"))
    return opf_path, etree.fromstring(archive.read(opf_path))


def _clock_s(value: str) -> float:
    """A SMIL clock value (``H:MM:SS.mmm``, as media:duration is written) in seconds."""
    hours, minutes, seconds = value.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def check_overlays(
    epub: Path, tmp: Path, *, audio_type: str = "audio/mp4"
) -> dict[str, list[tuple[str, float, float]]]:
    """Check the Media Overlays as strictly as can be done without a reading system.

    Asserts that every SMIL ``text`` fragment exists in its XHTML and that a SMIL's pars follow
    each page's document order (the overlay reads the book in order); that each chapter audio's
    clips tile it from 0 to its ffprobe'd end, increasing, with no gap and no overlap (the overlay
    plays the chapter file as the audiobook does, nothing skipped, nothing twice); that every
    ``media:duration`` equals its clips' total and the book's equals the sum; and that the
    manifest ties each page to the SMIL that points at it (``media-overlay``) and lists the audio.
    Returns SMIL path → [(fragment, begin, end)].
    """
    found: dict[str, list[tuple[str, float, float]]] = {}
    with zipfile.ZipFile(epub) as archive:
        names = set(archive.namelist())
        opf_path, opf = _package(archive)
        opf_dir = posixpath.dirname(opf_path)
        items = {i.get("id"): i for i in opf.iter(f"{_OPF}item")}
        by_path = {posixpath.normpath(posixpath.join(opf_dir, i.get("href"))): i for i in items.values()}
        smils = [path for path, i in by_path.items() if i.get("media-type") == "application/smil+xml"]
        assert smils, "no SMIL in the read-along EPUB's manifest"
        assert set(smils) == {n for n in names if n.endswith(".smil")}
        metas = {
            m.get("refines"): m.text for m in opf.iter(f"{_OPF}meta") if m.get("property") == "media:duration"
        }
        durations: dict[str, float] = {}
        total_s = 0.0
        for smil in smils:
            smil_id = by_path[smil].get("id")
            root = etree.fromstring(archive.read(smil))
            base = posixpath.dirname(smil)
            clips: dict[str, list[tuple[float, float]]] = {}
            order: dict[str, list[str]] = {}
            rows = []
            for par in root.iter(f"{_SMIL}par"):
                text = par.find(f"{_SMIL}text").get("src")
                audio = par.find(f"{_SMIL}audio")
                page, _, fragment = text.partition("#")
                page_path = posixpath.normpath(posixpath.join(base, page))
                assert fragment and page_path in names, text
                assert by_path[page_path].get("media-overlay") == smil_id, f"{page_path} does not name {smil}"
                order.setdefault(page_path, []).append(fragment)
                audio_path = posixpath.normpath(posixpath.join(base, audio.get("src")))
                assert by_path[audio_path].get("media-type") == audio_type, audio_path
                if audio_path not in durations:
                    local = tmp / audio_path.replace("/", "_")
                    local.write_bytes(archive.read(audio_path))
                    durations[audio_path] = probe_duration_ms(local) / 1000
                begin, end = _seconds(audio.get("clipBegin")), _seconds(audio.get("clipEnd"))
                assert 0 <= begin < end <= durations[audio_path] + 0.001, (
                    text,
                    begin,
                    end,
                    durations[audio_path],
                )
                clips.setdefault(audio_path, []).append((begin, end))
                rows.append((fragment, begin, end))
            for page_path, fragments in order.items():
                ids = [e.get("id") for e in etree.fromstring(archive.read(page_path)).iter() if e.get("id")]
                assert set(fragments) <= set(ids), f"{page_path}: no element for {set(fragments) - set(ids)}"
                positions = [ids.index(f) for f in fragments]
                assert positions == sorted(positions), f"{smil}: pars out of {page_path}'s reading order"
            for audio_path, spans in clips.items():
                assert spans[0][0] == 0.0, f"{audio_path}: the first clip starts at {spans[0][0]} s, not 0"
                for (_, end), (begin, _) in zip(spans, spans[1:], strict=False):
                    assert abs(begin - end) < 0.0005, (
                        f"{audio_path}: a gap or overlap at {end} s -> {begin} s"
                    )
                assert abs(spans[-1][1] - durations[audio_path]) < 0.01, (
                    audio_path,
                    spans[-1],
                    durations[audio_path],
                )
            clip_s = sum(end - begin for spans in clips.values() for begin, end in spans)
            assert abs(_clock_s(metas[f"#{smil_id}"]) - clip_s) < 0.002 * len(rows) + 0.001, (
                smil,
                metas[f"#{smil_id}"],
            )
            assert abs(clip_s - sum(durations[a] for a in clips)) < 0.01 * len(clips)
            total_s += _clock_s(metas[f"#{smil_id}"])
            found[smil] = rows
        assert abs(_clock_s(metas[None]) - total_s) < 0.002 * len(smils) + 0.001, (metas[None], total_s)
        _check_highlight(archive, opf, by_path, {p for p, i in by_path.items() if i.get("media-overlay")})
    return found


def _check_highlight(
    archive: zipfile.ZipFile, opf: etree._Element, by_path: dict[str, etree._Element], pages: set[str]
) -> None:
    """Every page with an overlay links a stylesheet of the book that styles the declared active
    class (Thorium applies the book's class in its default theme, and only CSS makes it visible)."""
    active = next(m.text for m in opf.iter(f"{_OPF}meta") if m.get("property") == "media:active-class")
    rule = re.compile(r"\." + re.escape(active) + r"\s*\{[^}]*background-color")
    for page in pages:
        root = etree.fromstring(archive.read(page))
        hrefs = [
            link.get("href")
            for link in root.iter("{http://www.w3.org/1999/xhtml}link")
            if "stylesheet" in (link.get("rel") or "").split()
        ]
        sheets = [posixpath.normpath(posixpath.join(posixpath.dirname(page), h)) for h in hrefs]
        styled = [
            s
            for s in sheets
            if s in by_path
            and by_path[s].get("media-type") == "text/css"
            and rule.search(archive.read(s).decode("utf-8", "replace"))
        ]
        assert styled, (
            f"{page}: no linked stylesheet styles .{active}, so the read sentence is not highlighted"
        )
