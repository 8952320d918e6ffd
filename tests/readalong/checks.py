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
_CLOCK_RE = re.compile(r"^(\d+(?:\.\d+)?)s$")


def epubcheck_errors(epub: Path) -> list[str]:
    """epubcheck's ERROR and FATAL lines (run as ``java -jar``: its /usr/bin link needs binfmt)."""
    assert shutil.which("java") and EPUBCHECK_JAR.is_file(), "install Debian's epubcheck (scripts/test.sh does)"
    done = subprocess.run(["java", "-jar", str(EPUBCHECK_JAR), str(epub)], capture_output=True, text=True,
                          timeout=600)
    lines = (done.stdout + done.stderr).splitlines()
    return [line for line in lines if line.startswith(("ERROR", "FATAL"))]


def _seconds(value: str) -> float:
    match = _CLOCK_RE.match(value)
    assert match, f"clip value {value!r} is not in seconds"
    return float(match.group(1))


def check_overlays(epub: Path, tmp: Path) -> dict[str, list[tuple[str, float, float]]]:
    """Assert every SMIL text fragment exists in its XHTML and every clip lies inside its audio,
    increasing; returns SMIL path → [(fragment, begin, end)]."""
    found: dict[str, list[tuple[str, float, float]]] = {}
    with zipfile.ZipFile(epub) as archive:
        names = set(archive.namelist())
        smils = [n for n in names if n.endswith(".smil")]
        assert smils, "no SMIL in the read-along EPUB"
        durations: dict[str, float] = {}
        for smil in smils:
            root = etree.fromstring(archive.read(smil))
            base = posixpath.dirname(smil)
            previous_end: dict[str, float] = {}
            rows = []
            for par in root.iter(f"{_SMIL}par"):
                text = par.find(f"{_SMIL}text").get("src")
                audio = par.find(f"{_SMIL}audio")
                page, _, fragment = text.partition("#")
                page_path = posixpath.normpath(posixpath.join(base, page))
                assert fragment and page_path in names, text
                ids = {e.get("id") for e in etree.fromstring(archive.read(page_path)).iter() if e.get("id")}
                assert fragment in ids, f"{text}: no element with that id"
                audio_path = posixpath.normpath(posixpath.join(base, audio.get("src")))
                if audio_path not in durations:
                    local = tmp / audio_path.replace("/", "_")
                    local.write_bytes(archive.read(audio_path))
                    durations[audio_path] = probe_duration_ms(local) / 1000
                begin, end = _seconds(audio.get("clipBegin")), _seconds(audio.get("clipEnd"))
                assert 0 <= begin < end <= durations[audio_path] + 0.001, (text, begin, end, durations[audio_path])
                assert begin >= previous_end.get(audio_path, 0.0) - 0.001, f"{text} starts before the previous clip ends"
                previous_end[audio_path] = end
                rows.append((fragment, begin, end))
            found[smil] = rows
    return found
