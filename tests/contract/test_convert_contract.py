"""Whole `python -m omni_web convert` runs against the real sglang-omni 0.1.9 server.

The servers are the contract servers of `conftest.py` (real `sgl-omni serve`, stub GPU pipeline,
started with our own argv). Each run converts `tests/data/hefty-water.epub` (4 chapters, 437
words) through the CLI with `--api-url`, and the finished m4b is checked with ffprobe: its
chapters, their titles, and a duration that fits the speech the server sent.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from omni_web.cli import main
from omni_web.client import SpeechClient, VoiceChoice
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest, run_conversion
from omni_web.settings import Settings
from tests.conftest import DATA_DIR
from tests.contract.conftest import HIGGS_KV_CAPACITY, REFERENCE_TEXT, ContractServer

pytestmark = pytest.mark.contract

BOOK = DATA_DIR / "hefty-water.epub"
CHAPTER_TITLES = ["Hefty Water", "The Switch", "The Source", "Hefty Ruby Water"]
BOOK_WORDS = 437


def probe_book(path: Path) -> dict[str, object]:
    """Duration, chapter titles and audio stream of an m4b, as ffprobe reads them."""
    out = subprocess.run(  # noqa: S603
        [
            "ffprobe",
            "-v",
            "error",
            "-show_chapters",
            "-show_format",
            "-show_streams",
            "-of",
            "json",
            str(path),
        ],  # noqa: S607
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    data = json.loads(out)
    audio = [s for s in data["streams"] if s["codec_type"] == "audio"]
    return {
        "duration": float(data["format"]["duration"]),
        "titles": [c.get("tags", {}).get("title") for c in data["chapters"]],
        "audio_codecs": [s["codec_name"] for s in audio],
    }


def convert(server: ContractServer, out: Path, *voice_args: str) -> Path:
    """Run the convert CLI against `server`; return the one m4b it wrote."""
    code = main(
        [
            "convert",
            str(BOOK),
            "--model",
            server.entry.key,
            *voice_args,
            "--api-url",
            server.base_url,
            "--out",
            str(out),
        ]
    )
    assert code == 0, server.log_tail()
    books = list(out.rglob("*.m4b"))
    assert len(books) == 1, books
    return books[0]


def assert_audiobook(path: Path) -> None:
    """Four chapters with the book's titles, AAC audio, and as long as espeak-ng reads 437 words."""
    book = probe_book(path)
    assert book["titles"] == CHAPTER_TITLES
    assert book["audio_codecs"] == ["aac"]
    # espeak-ng reads about 2.5-3 words a second; pauses between chunks and chapters add more.
    assert BOOK_WORDS / 4.0 < book["duration"] < BOOK_WORDS / 1.0


def test_convert_customvoice_speaker(
    qwen_custom: ContractServer, data_paths: DataPaths, tmp_path: Path
) -> None:
    assert_audiobook(convert(qwen_custom, tmp_path / "out", "--voice", "Vivian"))


def test_convert_voicedesign(qwen_design: ContractServer, data_paths: DataPaths, tmp_path: Path) -> None:
    book = convert(
        qwen_design, tmp_path / "out", "--instructions", "A warm, low female voice, speaking slowly."
    )
    assert_audiobook(book)


def test_convert_clone_by_local_path(
    qwen_base: ContractServer, data_paths: DataPaths, reference_clip: Path, tmp_path: Path
) -> None:
    book = convert(
        qwen_base, tmp_path / "out", "--clone", str(reference_clip), "--transcription", REFERENCE_TEXT
    )
    assert_audiobook(book)


def test_convert_clone_by_base64(
    qwen_base: ContractServer, data_paths: DataPaths, reference_clip: Path, tmp_path: Path
) -> None:
    # A remote server gets the clip inlined; the pipeline is the same one the CLI drives.
    request = ConvertRequest(
        book_path=BOOK,
        model_key=qwen_base.entry.key,
        voice=VoiceChoice.clone(reference_clip, REFERENCE_TEXT),
        output_dir=tmp_path / "out",
    )
    with SpeechClient(qwen_base.base_url, local_server=False) as remote:
        result = run_conversion(request, paths=data_paths, settings=Settings(), client=remote)
    assert result.m4b is not None
    assert_audiobook(result.m4b)


def test_convert_uploaded_voice(
    qwen_base: ContractServer, data_paths: DataPaths, reference_clip: Path, tmp_path: Path
) -> None:
    with SpeechClient(qwen_base.base_url) as client:
        client.upload_voice("book-narrator", reference_clip, consent="I agree.", ref_text=REFERENCE_TEXT)
        try:
            book = convert(qwen_base, tmp_path / "out", "--voice", "book-narrator")
        finally:
            client.delete_voice("book-narrator")
    assert_audiobook(book)


def test_convert_voxtral_preset(voxtral: ContractServer, data_paths: DataPaths, tmp_path: Path) -> None:
    # --language is given on purpose: Voxtral must not receive it (the real server answers 500).
    assert_audiobook(convert(voxtral, tmp_path / "out", "--voice", "casual_male", "--language", "English"))


def test_convert_higgs_with_kv_refit(higgs: ContractServer, data_paths: DataPaths, tmp_path: Path) -> None:
    assert_audiobook(convert(higgs, tmp_path / "out"))
    log = higgs.log_path.read_text(encoding="utf-8", errors="replace")
    # Every first attempt met the real KV-capacity 400; the audiobook exists because the refit fit.
    assert "Request requires more tokens than the thinker KV cache can hold" in log
    assert f"kv_capacity={HIGGS_KV_CAPACITY})" in log
