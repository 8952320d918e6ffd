"""Local transcripts of reference clips with faster-whisper.

Weights are Hugging Face repos (``Systran/faster-whisper-<size>``) kept in the standard HF cache,
installed through the model-management layer like any model (:func:`install_whisper_model`);
loading never downloads (:func:`load_whisper_model` raises :class:`TranscriberNotInstalled`),
so a transcription never stalls on a hidden download. The device is the GPU when CTranslate2 sees
one (float16), else the CPU with int8 weights.

Transcripts are cached by the clip's content hash (and the model size) under
``<state>/transcripts/``: transcribing the same clip twice runs the model once. The cached text is
only a suggestion; the library's ``<name>.txt`` is what the user edits and what requests carry.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from omni_web.errors import TranscriberNotInstalled, VoiceError
from omni_web.files import file_sha256, write_atomic
from omni_web.paths import DataPaths

__all__ = [
    "WHISPER_MODELS",
    "WhisperLike",
    "WhisperWeights",
    "cached_transcript",
    "choose_device",
    "install_whisper_model",
    "load_whisper_model",
    "transcribe_clip",
    "transcript_cache_dir",
    "whisper_local_dir",
    "whisper_repo_id",
]

# faster-whisper's own size -> repo table (faster_whisper/utils.py, 1.2.1), the common sizes.
WHISPER_MODELS: dict[str, str] = {
    "tiny": "Systran/faster-whisper-tiny",
    "tiny.en": "Systran/faster-whisper-tiny.en",
    "base": "Systran/faster-whisper-base",
    "base.en": "Systran/faster-whisper-base.en",
    "small": "Systran/faster-whisper-small",
    "small.en": "Systran/faster-whisper-small.en",
    "medium": "Systran/faster-whisper-medium",
    "medium.en": "Systran/faster-whisper-medium.en",
    "large-v2": "Systran/faster-whisper-large-v2",
    "large-v3": "Systran/faster-whisper-large-v3",
    "distil-large-v3": "Systran/faster-distil-whisper-large-v3",
    "large-v3-turbo": "mobiuslabsgmbh/faster-whisper-large-v3-turbo",
}
_BEAM_SIZE = 5
_log = logging.getLogger(__name__)


class WhisperLike(Protocol):
    """What :func:`transcribe_clip` needs of a model: faster-whisper's ``WhisperModel.transcribe``."""

    def transcribe(self, audio: str, **kwargs: Any) -> tuple[Any, Any]: ...  # pragma: no cover


def whisper_repo_id(size: str) -> str:
    """The HF repo holding faster-whisper weights of ``size`` (a repo id passes through).

    Raises:
        VoiceError: an unknown size; the message lists the known ones.
    """
    text = size.strip()
    if "/" in text:
        return text
    try:
        return WHISPER_MODELS[text]
    except KeyError:
        raise VoiceError(
            f"Unknown transcription model size '{size}'. Choose one of: {', '.join(WHISPER_MODELS)} "
            "(Settings: transcription model)."
        ) from None


def transcript_cache_dir(paths: DataPaths) -> Path:
    """Where transcripts are cached: ``<state>/transcripts``."""
    return paths.state_dir / "transcripts"


def choose_device(device: str | None = None) -> tuple[str, str]:
    """``(device, compute_type)``: ``("cuda", "float16")`` with a GPU, else ``("cpu", "int8")``.

    ``device`` forces ``"cuda"`` or ``"cpu"``; None asks CTranslate2 whether a GPU is usable.
    """
    if device is None:
        try:
            import ctranslate2

            device = "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"
        except (ImportError, RuntimeError, OSError):
            device = "cpu"
    if device not in ("cuda", "cpu"):
        raise VoiceError(f"Transcription device must be 'cuda' or 'cpu', not '{device}'.")
    return device, "float16" if device == "cuda" else "int8"


@dataclass(frozen=True, slots=True)
class WhisperWeights:
    """faster-whisper weights as the model-management layer sees a model: a key and a repo."""

    size: str
    key: str
    repo_id: str

    @classmethod
    def for_size(cls, size: str) -> WhisperWeights:
        """The weights of ``size`` (``tiny`` … ``large-v3``, or a repo id)."""
        return cls(size=size.strip(), key=f"whisper-{size.strip()}", repo_id=whisper_repo_id(size))


def whisper_local_dir(size: str, *, cache_dir: Path | None = None) -> Path | None:
    """The cached snapshot folder of ``size``'s weights in the HF cache, or None when absent.

    ``cache_dir`` None means the standard cache (``HF_HUB_CACHE``), the one the Models tab uses.
    """
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    from omni_web.models.cache import hub_cache_dir

    try:
        folder = snapshot_download(
            whisper_repo_id(size), cache_dir=str(hub_cache_dir(cache_dir)), local_files_only=True
        )
    except (LocalEntryNotFoundError, FileNotFoundError, OSError):
        return None
    # faster-whisper needs the CTranslate2 weights; a snapshot without them is not installed.
    return Path(folder) if (Path(folder) / "model.bin").is_file() else None


def install_whisper_model(
    size: str,
    *,
    progress: Callable[[Any], None] | None = None,
    cancel: threading.Event | None = None,
    cache_dir: Path | None = None,
    endpoint: str | None = None,
) -> Path:
    """Download ``size``'s weights into the HF cache through the model-management layer.

    Files already cached are skipped. ``progress`` receives the model layer's
    ``DownloadProgress`` events; ``cancel`` aborts.

    Returns:
        The snapshot folder.

    Raises:
        DownloadError, GatedModel, DiskFullError, DownloadCancelled: from
        :func:`omni_web.models.download.download_model`.
    """
    from omni_web.models.download import download_model

    # download_model reads only `key` and `repo_id` of its entry, which WhisperWeights carries.
    return download_model(
        WhisperWeights.for_size(size),  # type: ignore[arg-type]
        progress=progress, cancel=cancel, cache_dir=cache_dir, endpoint=endpoint,
    )


def load_whisper_model(size: str, *, device: str | None = None, cache_dir: Path | None = None) -> Any:
    """Load faster-whisper ``size`` from the HF cache on ``device`` (GPU if any, else CPU int8).

    With ``device`` None a GPU that cannot take the model (the TTS server holds its memory) falls
    back to the CPU.

    Raises:
        TranscriberNotInstalled: the weights are not downloaded (:func:`install_whisper_model`).
        VoiceError: the weights are there but do not load.
    """
    local = whisper_local_dir(size, cache_dir=cache_dir)
    if local is None:
        raise TranscriberNotInstalled(size.strip(), whisper_repo_id(size))
    device_name, compute_type = choose_device(device)
    from faster_whisper import WhisperModel

    try:
        return WhisperModel(str(local), device=device_name, compute_type=compute_type)
    except (RuntimeError, ValueError, OSError) as exc:
        if device is None and device_name == "cuda":
            # The TTS server usually holds most of the VRAM; the CPU with int8 still works.
            _log.warning("faster-whisper did not load on the GPU (%s); using the CPU", exc)
            return load_whisper_model(size, device="cpu", cache_dir=cache_dir)
        raise VoiceError(
            f"The transcription model '{size}' at {local} did not load on {device_name} ({exc}). "
            "Remove it and install it again, or pick another size in Settings."
        ) from exc


def _cache_file(cache_dir: Path, sha256: str, model_size: str) -> Path:
    safe_size = "".join(ch if ch.isalnum() or ch in ".-" else "_" for ch in model_size)
    return cache_dir / f"{sha256}.{safe_size}.txt"


def cached_transcript(path: Path, *, model_size: str, cache_dir: Path) -> str | None:
    """The cached transcript of the clip at ``path`` for ``model_size``, or None."""
    cache = _cache_file(cache_dir, file_sha256(path), model_size)
    try:
        return cache.read_text(encoding="utf-8").strip()
    except (FileNotFoundError, UnicodeDecodeError):
        return None


def transcribe_clip(
    path: Path,
    *,
    model_size: str,
    model: WhisperLike | None = None,
    device: str | None = None,
    cache_dir: Path | None = None,
    language: str | None = None,
    hf_cache_dir: Path | None = None,
    loader: Callable[..., WhisperLike] | None = None,
) -> str:
    """What the clip at ``path`` says, as one line of text.

    Args:
        path: an audio file faster-whisper can decode (library clips are mono WAV).
        model_size: the faster-whisper size (Settings' transcription model), also the cache key.
        model: a loaded ``WhisperModel`` (or an object with its ``transcribe``); None loads
            ``model_size`` from the HF cache.
        device: ``"cuda"`` or ``"cpu"`` when loading; None picks the GPU if there is one.
        cache_dir: the transcript cache (:func:`transcript_cache_dir`); None disables caching.
        language: an ISO code such as ``"en"``; None lets Whisper detect it.
        hf_cache_dir: the HF cache to load weights from; None is the standard one.
        loader: loads the model when ``model`` is None and the cache misses, called like
            :func:`load_whisper_model` (``size, device=, cache_dir=``); None is that function.

    Raises:
        TranscriberNotInstalled: ``model`` is None and the weights are not downloaded.
        VoiceError: the model failed on this clip, or heard no speech.
    """
    path = Path(path)
    if cache_dir is not None:
        hit = cached_transcript(path, model_size=model_size, cache_dir=cache_dir)
        if hit:
            return hit
    if model is None:
        model = (loader or load_whisper_model)(model_size, device=device, cache_dir=hf_cache_dir)
    try:
        segments, _info = model.transcribe(str(path), beam_size=_BEAM_SIZE, language=language)
        # `segments` is a generator: the model runs while it is consumed.
        text = " ".join(segment.text.strip() for segment in segments if segment.text.strip())
    except (RuntimeError, ValueError, OSError) as exc:
        raise VoiceError(f"Transcribing {path.name} failed ({exc}). Type the transcript instead.") from exc
    if not text:
        raise VoiceError(
            f"No speech was recognised in {path.name}. Type the transcript yourself, or add a clip "
            "with clearer speech."
        )
    if cache_dir is not None:
        _store(_cache_file(cache_dir, file_sha256(path), model_size), text)
    return text


def _store(cache: Path, text: str) -> None:
    """Write the cache entry atomically; a failure to cache is not a failure to transcribe."""
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(cache, text + "\n")
    except OSError as exc:
        _log.warning("Could not cache the transcript in %s: %s", cache, exc)
