"""The voices CLI end to end against the fake sgl-omni server.

A clip added through the CLI is cleaned and given a transcript (typed, or transcribed through the
faster-whisper wrapper with an injected model), then cloned against the fake server by local path
and, as a remote server would get it, by base64 data URL (the fake's request log shows the bodies);
it is uploaded to the server and listed back, used by name, and deleted.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from omni_web.catalog import get_entry
from omni_web.cli import main
from omni_web.client import SpeechClient, SpeechRequest
from omni_web.paths import DataPaths
from omni_web.settings import Settings, save_settings
from omni_web.voices import transcribe
from omni_web.voices.library import VoiceLibrary
from omni_web.voices.reference import clone_choice
from tests.fakes.sgl_omni import FakeServer, start_fake_server
from tests.test_voices_transcribe import FakeWhisper
from tests.voice_clips import EIGHT_SECONDS_TEXT, espeak, ffmpeg, probe, sox

pytestmark = pytest.mark.slow  # real ffmpeg, espeak-ng speech, sox

TRANSCRIPT = "The quick brown fox jumps over the lazy dog."


@pytest.fixture(scope="module")
def padded_mp3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("cli-clips")
    speech = espeak(EIGHT_SECONDS_TEXT, d / "speech.wav")
    sox(speech, d / "padded.wav", "pad", "2", "2")
    ffmpeg("-i", d / "padded.wav", d / "narrator take 1.mp3")
    return d / "narrator take 1.mp3"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[FakeServer]:
    with start_fake_server(
        "moss_tts",
        env={"FAKE_SGL_REQUEST_LOG": str(tmp_path / "requests.jsonl")},
        log_path=tmp_path / "fake.log",
    ) as fake:
        yield fake


def _requests(tmp_path: Path) -> list[dict]:
    lines = (tmp_path / "requests.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_add_list_transcript_rename_remove(
    data_paths: DataPaths, padded_mp3: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["voices", "add", str(padded_mp3)]) == 0
    out = capsys.readouterr().out
    assert "Tip: 10-20 s of clean speech works best." in out
    assert "s of silence at the start and" in out
    assert "No transcript: clone requests go without ref_text, and quality may drop." in out
    wav = data_paths.voices_dir / "narrator_take_1.wav"
    assert probe(wav)["duration"] < probe(padded_mp3)["duration"] - 3.5

    assert main(["voices", "transcript", "narrator_take_1", TRANSCRIPT]) == 0
    assert (data_paths.voices_dir / "narrator_take_1.txt").read_text().strip() == TRANSCRIPT
    assert main(["voices", "rename", "narrator_take_1", "narrator"]) == 0
    capsys.readouterr()
    assert main(["voices", "list"]) == 0
    listing = capsys.readouterr().out
    assert listing.startswith("narrator ") and TRANSCRIPT[:40] in listing

    assert main(["voices", "add", str(padded_mp3), "--name", "narrator"]) == 1
    assert "already exists" in capsys.readouterr().err
    assert main(["voices", "add", str(padded_mp3), "--name", "../escape"]) == 1
    assert "The voice name '../escape'" in capsys.readouterr().err
    assert main(["voices", "remove", "narrator"]) == 0
    assert sorted(p.name for p in data_paths.voices_dir.iterdir()) == []


def test_add_with_transcribe_uses_the_wrapper_and_its_cache(
    data_paths: DataPaths,
    padded_mp3: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    model = FakeWhisper([" The quick brown fox", " jumps over the lazy dog."])
    monkeypatch.setattr(transcribe, "whisper_local_dir", lambda size, **_: data_paths.root)
    monkeypatch.setattr(transcribe, "load_whisper_model", lambda size, **_: model)
    assert (
        main(["voices", "add", str(padded_mp3), "--name", "narrator", "--transcribe", "--size", "tiny"]) == 0
    )
    assert f"Transcript: {TRANSCRIPT}" in capsys.readouterr().out
    assert VoiceLibrary(data_paths).get("narrator").transcript == TRANSCRIPT
    # Clear it and transcribe again: the cache answers, the model is not run a second time.
    assert main(["voices", "transcript", "narrator", "--clear"]) == 0
    assert main(["voices", "transcript", "narrator", "--transcribe", "--size", "tiny"]) == 0
    assert VoiceLibrary(data_paths).get("narrator").transcript == TRANSCRIPT
    assert len(model.calls) == 1


def test_transcribe_without_weights_keeps_the_clip_and_says_how_to_install(
    data_paths: DataPaths,
    padded_mp3: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from omni_web.errors import DownloadError

    def offline(size: str, **_: object) -> Path:
        raise DownloadError("The Hugging Face Hub cannot be reached (offline).")

    monkeypatch.setattr(transcribe, "whisper_local_dir", lambda size, **_: None)
    monkeypatch.setattr(transcribe, "install_whisper_model", offline)
    assert main(["voices", "add", str(padded_mp3), "--name", "narrator", "--transcribe"]) == 1
    captured = capsys.readouterr()
    assert "the clip was added, but not transcribed" in captured.err
    assert "quality may drop" in captured.out
    assert VoiceLibrary(data_paths).get("narrator").transcript is None


def test_clone_by_path_by_base64_upload_and_list_back(
    data_paths: DataPaths,
    padded_mp3: Path,
    server: FakeServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = server.base_url
    assert main(["voices", "add", str(padded_mp3), "--name", "narrator", "--transcript", TRANSCRIPT]) == 0
    voice = VoiceLibrary(data_paths).get("narrator")

    # A loopback server reads the clip from its local path.
    out = tmp_path / "by-path.wav"
    assert main(["voices", "preview", "narrator", "--api-url", url, "--out", str(out)]) == 0
    body = _requests(tmp_path)[-1]
    assert body["ref_audio"] == str(voice.wav_path.resolve())
    assert body["ref_text"] == TRANSCRIPT
    assert probe(out)["duration"] > 1.0

    # A remote server (here: the same fake, reached as if remote) gets the clip inline.
    out = tmp_path / "by-base64.wav"
    assert (
        main(
            ["voices", "preview", "clone:narrator", "--api-url", url, "--inline-reference", "--out", str(out)]
        )
        == 0
    )
    body = _requests(tmp_path)[-1]
    prefix = "data:audio/wav;base64,"
    assert body["ref_audio"].startswith(prefix)
    assert base64.b64decode(body["ref_audio"][len(prefix) :]) == voice.wav_path.read_bytes()
    assert body["ref_text"] == TRANSCRIPT
    with SpeechClient(url, local_server=False) as remote:
        result = remote.speech(
            get_entry("moss_tts"), SpeechRequest(text="Hello.", voice=clone_choice(voice, paths=data_paths))
        )
    assert result.duration_s and _requests(tmp_path)[-1]["ref_audio"].startswith(prefix)

    # Upload with consent and the transcript, then list it back from the server.
    capsys.readouterr()
    assert (
        main(["voices", "upload", "narrator", "--consent", "I recorded this myself.", "--api-url", url]) == 0
    )
    assert "Uploaded 'narrator'" in capsys.readouterr().out
    assert main(["voices", "list", "--server", "--api-url", url]) == 0
    listed = capsys.readouterr().out
    assert "narrator" in listed and "transcript" in listed
    with SpeechClient(url) as client:
        (uploaded,) = client.voices().uploaded
    assert (uploaded.name, uploaded.consent, uploaded.ref_text) == (
        "narrator",
        "I recorded this myself.",
        TRANSCRIPT,
    )
    assert uploaded.file_size == voice.size_bytes
    assert (
        uploaded.size_str == voice.size_str and uploaded.size_str in listed
    )  # sized like the Generate tab's list
    assert uploaded.created_str != "-" and uploaded.created_str in listed

    # The uploaded voice is used by name; then it is deleted from the server.
    assert (
        main(["voices", "preview", "uploaded:narrator", "--api-url", url, "--out", str(tmp_path / "up.wav")])
        == 0
    )
    body = _requests(tmp_path)[-1]
    assert body["voice"] == "narrator" and "ref_audio" not in body
    assert main(["voices", "remove", "narrator", "--server", "--api-url", url]) == 0
    with SpeechClient(url) as client:
        assert client.voices().uploaded == ()


def test_a_clip_without_transcript_goes_without_ref_text(
    data_paths: DataPaths,
    padded_mp3: Path,
    server: FakeServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    save_settings(data_paths, Settings(server_port=server.port))  # the server `server status` finds
    assert main(["voices", "add", str(padded_mp3), "--name", "bare"]) == 0
    capsys.readouterr()
    assert main(["voices", "preview", "bare", "--out", str(tmp_path / "bare.wav")]) == 0
    assert (
        "has no transcript, so requests go without ref_text and cloning quality may drop"
        in capsys.readouterr().out
    )
    body = _requests(tmp_path)[-1]
    assert "ref_text" not in body
    assert body["ref_audio"] == str((data_paths.voices_dir / "bare.wav").resolve())


def test_server_commands_without_a_server_say_what_to_do(
    data_paths: DataPaths, padded_mp3: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.fakes.sgl_omni import free_port

    save_settings(data_paths, Settings(server_port=free_port()))
    assert main(["voices", "add", str(padded_mp3), "--name", "narrator"]) == 0
    assert main(["voices", "upload", "narrator", "--consent", "yes"]) == 1
    assert "python -m omni_web server start" in capsys.readouterr().err


def test_done_when_a_cli_voice_clones_a_book_by_path_and_by_base64(
    data_paths: DataPaths, padded_mp3: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's "done when": a CLI-added clip is used for a clone conversion, by path and by base64."""
    from omni_web.client import VoiceChoice
    from omni_web.pipeline import ConvertRequest, run_conversion
    from tests.conftest import DATA_DIR

    log = tmp_path / "requests.jsonl"
    book = DATA_DIR / "hefty-water.epub"
    with start_fake_server(
        "moss_tts",
        env={"FAKE_SGL_REQUEST_LOG": str(log), "FAKE_SGL_SECONDS_PER_WORD": "0.01"},
        log_path=tmp_path / "fake.log",
    ) as server:
        assert main(["voices", "add", str(padded_mp3), "--name", "narrator", "--transcript", TRANSCRIPT]) == 0
        voice = VoiceLibrary(data_paths).get("narrator")

        # CLI conversion against a loopback server: the clip goes as its local path.
        out = tmp_path / "by-path"
        assert (
            main(
                [
                    "convert",
                    str(book),
                    "--model",
                    "moss_tts",
                    "--clone",
                    "narrator",
                    "--chapters",
                    "1",
                    "--api-url",
                    server.base_url,
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
        bodies = _requests(tmp_path)
        assert bodies and all(b["ref_audio"] == str(voice.wav_path.resolve()) for b in bodies)
        assert all(b["ref_text"] == TRANSCRIPT for b in bodies)
        assert list(out.rglob("*.m4b"))

        # The same conversion as a remote server gets it: the clip inlined as base64.
        log.write_text("")
        request = ConvertRequest(
            book_path=book,
            model_key="moss_tts",
            chapters=(1,),
            voice=VoiceChoice.clone(voice.wav_path, voice.transcript),
            output_dir=tmp_path / "by-base64",
        )
        fresh = DataPaths(tmp_path / "other-home").ensure()  # no chunks cached from the first run
        with SpeechClient(server.base_url, local_server=False) as remote:
            result = run_conversion(request, paths=fresh, settings=Settings(), client=remote)
        assert result.m4b is not None and result.m4b.is_file()
        prefix = "data:audio/wav;base64,"
        bodies = _requests(tmp_path)
        assert bodies and all(b["ref_audio"].startswith(prefix) for b in bodies)
        for body in bodies:
            assert base64.b64decode(body["ref_audio"].removeprefix(prefix)) == voice.wav_path.read_bytes()
            assert body["ref_text"] == TRANSCRIPT
