"""Transcripts through faster-whisper's real API: an injected model object, the cache, the loader.

The injected model checks every call against the signature of the real
``faster_whisper.WhisperModel.transcribe`` and answers with the library's own ``Segment`` and
``TranscriptionInfo`` records, so a wrapper that passed a wrong keyword or mis-read the result
would fail here. One test runs a real model when one is in the local Hugging Face cache.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from faster_whisper import WhisperModel
from faster_whisper.transcribe import Segment, TranscriptionInfo, TranscriptionOptions, VadOptions

from omni_web.errors import ModelNotInstalled, TranscriberNotInstalled, VoiceError
from omni_web.paths import DataPaths
from omni_web.settings import Settings
from omni_web.voices.transcribe import (
    WhisperWeights,
    cached_transcript,
    choose_device,
    install_whisper_model,
    load_whisper_model,
    transcribe_clip,
    transcript_cache_dir,
    whisper_local_dir,
    whisper_repo_id,
)
from tests.fakes.fake_hf_hub import FakeHub, FakeRepo
from tests.voice_clips import EIGHT_SECONDS_TEXT, espeak

pytestmark = pytest.mark.slow  # espeak-ng speech, faster-whisper

_REAL_TRANSCRIBE = inspect.signature(WhisperModel.transcribe)


def _options() -> TranscriptionOptions:
    """Real TranscriptionOptions with every field at a plausible value (no model needed)."""
    values: dict[str, Any] = {}
    for name, parameter in inspect.signature(TranscriptionOptions).parameters.items():
        default = _REAL_TRANSCRIBE.parameters.get(name, parameter).default
        values[name] = None if default is inspect.Parameter.empty else default
    return TranscriptionOptions(**values)


class FakeWhisper:
    """A WhisperModel stand-in: same ``transcribe`` signature, real result records."""

    def __init__(self, texts: list[str], *, error: Exception | None = None) -> None:
        self.texts = texts
        self.error = error
        self.calls: list[inspect.BoundArguments] = []

    def transcribe(
        self, audio: Any, *args: Any, **kwargs: Any
    ) -> tuple[Iterator[Segment], TranscriptionInfo]:
        bound = _REAL_TRANSCRIBE.bind(self, audio, *args, **kwargs)  # TypeError on a wrong call
        self.calls.append(bound)
        info = TranscriptionInfo(
            language="en",
            language_probability=0.99,
            duration=8.0,
            duration_after_vad=8.0,
            all_language_probs=None,
            transcription_options=_options(),
            vad_options=VadOptions(),
        )
        return self._segments(), info

    def _segments(self) -> Iterator[Segment]:
        # Lazy, like the real generator: errors surface while the wrapper iterates.
        if self.error is not None:
            raise self.error
        for index, text in enumerate(self.texts):
            yield Segment(
                id=index,
                seek=0,
                start=index * 2.0,
                end=index * 2.0 + 2.0,
                text=text,
                tokens=[1, 2],
                avg_logprob=-0.2,
                compression_ratio=1.3,
                no_speech_prob=0.01,
                words=None,
                temperature=0.0,
            )


@pytest.fixture(scope="module")
def speech(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return espeak(EIGHT_SECONDS_TEXT, tmp_path_factory.mktemp("speech") / "speech.wav")


def test_segments_are_joined_and_the_real_api_is_called(speech: Path) -> None:
    model = FakeWhisper([" The quick brown fox", " jumps over the lazy dog. ", "  "])
    text = transcribe_clip(speech, model_size="small", model=model, language="en")
    assert text == "The quick brown fox jumps over the lazy dog."
    (call,) = model.calls
    assert call.arguments["audio"] == str(speech)
    assert call.arguments["language"] == "en"
    assert call.arguments["beam_size"] == 5


def test_cache_hit_runs_the_model_once_per_content_hash(
    speech: Path, data_paths: DataPaths, tmp_path: Path
) -> None:
    cache = transcript_cache_dir(data_paths)
    model = FakeWhisper(["Hello world."])
    assert transcribe_clip(speech, model_size="small", model=model, cache_dir=cache) == "Hello world."
    assert transcribe_clip(speech, model_size="small", model=model, cache_dir=cache) == "Hello world."
    assert len(model.calls) == 1
    # The same bytes under another name are the same clip.
    copy = tmp_path / "copy.wav"
    copy.write_bytes(speech.read_bytes())
    assert transcribe_clip(copy, model_size="small", model=model, cache_dir=cache) == "Hello world."
    assert len(model.calls) == 1
    assert cached_transcript(copy, model_size="small", cache_dir=cache) == "Hello world."
    assert len(list(cache.iterdir())) == 1
    # Other content, or another model size, runs the model again.
    other = espeak("Something else entirely.", tmp_path / "other.wav")
    transcribe_clip(other, model_size="small", model=model, cache_dir=cache)
    transcribe_clip(speech, model_size="tiny", model=model, cache_dir=cache)
    assert len(model.calls) == 3


def test_no_speech_and_model_failures_become_voice_errors(speech: Path) -> None:
    with pytest.raises(VoiceError, match="No speech was recognised"):
        transcribe_clip(speech, model_size="small", model=FakeWhisper([]))
    with pytest.raises(VoiceError, match=r"Transcribing speech.wav failed \(CUDA out of memory\)"):
        transcribe_clip(
            speech, model_size="small", model=FakeWhisper([], error=RuntimeError("CUDA out of memory"))
        )


def test_repo_ids_and_device_choice() -> None:
    assert whisper_repo_id("tiny") == "Systran/faster-whisper-tiny"
    assert whisper_repo_id("large-v3-turbo") == "mobiuslabsgmbh/faster-whisper-large-v3-turbo"
    assert whisper_repo_id("me/my-ct2-whisper") == "me/my-ct2-whisper"
    with pytest.raises(VoiceError, match="Unknown transcription model size 'huge'.*tiny, tiny.en"):
        whisper_repo_id("huge")
    assert choose_device("cpu") == ("cpu", "int8")
    assert choose_device("cuda") == ("cuda", "float16")
    import ctranslate2

    expected = "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"
    assert choose_device()[0] == expected
    with pytest.raises(VoiceError):
        choose_device("tpu")


def _fake_snapshot(cache: Path, repo_id: str, files: dict[str, bytes]) -> Path:
    """Lay out one cached snapshot the way huggingface_hub does (refs/main -> snapshots/<sha>)."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for name, data in files.items():
        (snapshot / name).write_bytes(data)
    return snapshot


def test_missing_weights_say_how_to_install(tmp_path: Path) -> None:
    assert whisper_local_dir("tiny", cache_dir=tmp_path) is None
    with pytest.raises(TranscriberNotInstalled) as caught:
        load_whisper_model("tiny", cache_dir=tmp_path)
    assert isinstance(caught.value, ModelNotInstalled)
    assert caught.value.repo_id == "Systran/faster-whisper-tiny"
    assert "voices transcriber install --size tiny" in str(caught.value)


def test_broken_weights_fail_to_load_with_a_clear_message(tmp_path: Path) -> None:
    config = json.dumps({"alignment_heads": [], "lang_ids": [], "suppress_ids": []}).encode()
    snapshot = _fake_snapshot(
        tmp_path, "Systran/faster-whisper-tiny", {"config.json": config, "model.bin": b"junk"}
    )
    assert whisper_local_dir("tiny", cache_dir=tmp_path) == snapshot
    with pytest.raises(VoiceError, match="did not load on cpu"):
        load_whisper_model("tiny", device="cpu", cache_dir=tmp_path)


def test_a_gpu_that_cannot_load_falls_back_to_the_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import omni_web.voices.transcribe as module

    config = json.dumps({"alignment_heads": [], "lang_ids": [], "suppress_ids": []}).encode()
    _fake_snapshot(tmp_path, "Systran/faster-whisper-tiny", {"config.json": config, "model.bin": b"junk"})
    real_choose = module.choose_device
    tried: list[str | None] = []

    def pretend_gpu(device: str | None = None) -> tuple[str, str]:
        tried.append(device)
        return ("cuda", "float16") if device is None else real_choose(device)

    monkeypatch.setattr(module, "choose_device", pretend_gpu)
    # This machine's CTranslate2 cannot load on CUDA, so the auto choice retries on the CPU,
    # where the junk weights fail with the CPU named in the message.
    with pytest.raises(VoiceError, match="did not load on cpu"):
        load_whisper_model("tiny", cache_dir=tmp_path)
    assert tried == [None, "cpu"]


def test_install_downloads_through_the_model_layer_into_the_hf_cache(tmp_path: Path) -> None:
    files = {
        "config.json": b'{"lang_ids": []}',
        "model.bin": bytes(range(256)) * 64,
        "vocabulary.txt": b"a\nb\n",
    }
    events: list[Any] = []
    with FakeHub([FakeRepo("Systran/faster-whisper-tiny", files)]) as hub:
        folder = install_whisper_model("tiny", cache_dir=tmp_path, endpoint=hub.url, progress=events.append)
    assert folder.parent.parent == tmp_path / "models--Systran--faster-whisper-tiny"
    assert (folder / "model.bin").read_bytes() == files["model.bin"]
    assert whisper_local_dir("tiny", cache_dir=tmp_path) == folder
    assert events and events[-1].key == "whisper-tiny"
    assert WhisperWeights.for_size(" small ").key == "whisper-small"


_REAL_MODEL_SIZES = ("tiny", "tiny.en", "base", "base.en", Settings().transcription_model)


def test_real_model_from_the_local_hf_cache(speech: Path) -> None:
    """Runs faster-whisper itself on CPU when a small model is already in the HF cache."""
    size = next((s for s in _REAL_MODEL_SIZES if whisper_local_dir(s) is not None), None)
    if size is None:
        pytest.skip(
            "Skipped: no faster-whisper model (tiny, tiny.en, base, base.en or the configured "
            f"'{Settings().transcription_model}') is in the local Hugging Face cache, and this "
            "machine cannot download one; run `python -m omni_web voices transcriber install --size "
            "tiny` to run this test."
        )
    text = transcribe_clip(speech, model_size=size, device="cpu").lower()
    assert "fox" in text or "quick" in text or "sea" in text, text
