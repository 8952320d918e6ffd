"""The QA recogniser: which faster-whisper sizes can be chosen, and where one runs.

A stronger recogniser hears synthetic speech better (fewer scattered errors, so tighter limits),
but costs memory and time. On a GPU machine the TTS server holds most of the memory: the QA model
runs on CUDA (float16) only when its footprint fits in what the GPU has free beside the server
(NVML's free memory, omni_web/gpu.py), with a margin; otherwise on the CPU (int8), and the choice
says why, so a slow QA pass is explained rather than a mystery.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omni_web.gpu import GpuProbe

if TYPE_CHECKING:
    from omni_web.models import CachedModel, RemovalPlan

__all__ = [
    "QA_ASR_MODELS",
    "AsrDevice",
    "AsrModel",
    "asr_model",
    "asr_model_rows",
    "choose_asr_device",
    "download_asr_model",
    "plan_asr_removal",
]


@dataclass(frozen=True, slots=True)
class AsrModel:
    """A faster-whisper size offered for QA."""

    size: str
    download_mb: int  # the CTranslate2 weights in the HF cache
    cuda_mb: int  # memory it holds on a GPU in float16 while transcribing one take (weights + buffers)
    english_only: bool
    note: str

    # The model-management layer (omni_web/models: cache scan, download, removal) reads these three,
    # as it reads a catalog entry's: ASR weights live in the same HF cache as the TTS models.
    @property
    def key(self) -> str:
        """``whisper-small.en``: the key the models layer and the Models tab use."""
        return f"whisper-{self.size}"

    @property
    def repo_id(self) -> str:
        """The HF repo of its CTranslate2 weights."""
        from omni_web.voices.transcribe import whisper_repo_id

        return whisper_repo_id(self.size)

    @property
    def label(self) -> str:
        """``faster-whisper small.en``."""
        return f"faster-whisper {self.size}"


# Sizes of the Systran / mobiuslabs CTranslate2 repos (voices/transcribe.py names them); GPU figures
# are weights in float16 plus ~0.5 GB of decoder buffers and CUDA context for one take at a time.
QA_ASR_MODELS: tuple[AsrModel, ...] = (
    AsrModel("tiny.en", 75, 600, True, "fastest; hears synthetic voices loosely (the tests' model)"),
    AsrModel("base.en", 145, 700, True, "about 2x the time of tiny.en, fewer misheard words"),
    AsrModel("small.en", 485, 1200, True, "a good CPU choice for English books if the CPU keeps up"),
    AsrModel("distil-large-v3", 1510, 2300, False, "near large-v3 accuracy at ~6x its speed; GPU advised"),
    AsrModel("large-v3-turbo", 1620, 2500, False, "the strongest; GPU advised"),
)
_BY_SIZE = {m.size: m for m in QA_ASR_MODELS}
# Free memory left to the TTS server after the QA model is loaded: its KV cache grows with the
# batch, and running out kills requests mid-book.
_GPU_MARGIN_MB = 1024


def asr_model(size: str) -> AsrModel | None:
    """The offered model of ``size`` or of its key ``whisper-<size>`` (None for a model folder)."""
    size = size.strip()
    return _BY_SIZE.get(size.removeprefix("whisper-")) if size.startswith("whisper-") else _BY_SIZE.get(size)


@dataclass(frozen=True, slots=True)
class AsrDevice:
    """Where the QA recogniser runs, and why."""

    device: str  # "cuda" or "cpu"
    compute_type: str  # "float16" on CUDA, "int8" on the CPU
    note: str  # one sentence for the job's log and the Settings tab


def choose_asr_device(size: str, *, requested: str | None, probe: Callable[[], GpuProbe]) -> AsrDevice:
    """CUDA float16 when asked for or ``auto`` and the model fits beside the TTS server; else CPU int8.

    ``requested`` is the Settings choice: ``cpu``, ``cuda`` or None/``auto``. ``probe`` reads the
    GPUs (``omni_web.gpu.probe_gpus``; tests pass their own).
    """
    if requested == "cpu":
        return AsrDevice("cpu", "int8", "QA speech recognition runs on the CPU (int8), as Settings ask.")
    model = asr_model(size)
    need_mb = (model.cuda_mb if model is not None else 2500) + _GPU_MARGIN_MB
    found = probe()
    if not found.gpus:
        why = found.warning or "no NVIDIA GPU found"
        return AsrDevice("cpu", "int8", f"QA speech recognition runs on the CPU (int8): {why}.")
    best = max(found.gpus, key=lambda g: g.free_memory_bytes)
    free_mb = best.free_memory_bytes // (1024 * 1024)
    if free_mb >= need_mb:
        return AsrDevice(
            "cuda",
            "float16",
            f"QA speech recognition runs on GPU {best.index} ({best.name}, float16): "
            f"{free_mb} MB free, {size} needs ~{need_mb - _GPU_MARGIN_MB} MB.",
        )
    return AsrDevice(
        "cpu",
        "int8",
        (
            f"QA speech recognition runs on the CPU (int8): GPU {best.index} has {free_mb} MB free beside "
            "the TTS "
            f"server and {size} needs ~{need_mb - _GPU_MARGIN_MB} MB plus {_GPU_MARGIN_MB} MB of headroom. "
            "Pick a "
            "smaller QA model in Settings to run it on the GPU."
        ),
    )


def asr_model_rows(*, cache_dir: Path | str | None = None) -> list[tuple[AsrModel, CachedModel | None]]:
    """Every offered QA model with what the HF cache holds of it (None: nothing)."""
    from omni_web.models import cached_models

    cached = {model.key: model for model in cached_models(cache_dir=cache_dir, entries=QA_ASR_MODELS)}  # type: ignore[arg-type]
    return [(model, cached.get(model.key)) for model in QA_ASR_MODELS]


def _known(size_or_key: str) -> AsrModel:
    model = asr_model(size_or_key)
    if model is None:
        from omni_web.errors import TranscriberNotInstalled

        offered = ", ".join(m.size for m in QA_ASR_MODELS)
        raise TranscriberNotInstalled(size_or_key, f"one of the offered QA models ({offered})")
    return model


def download_asr_model(
    size: str,
    *,
    progress: Callable[[Any], None] | None = None,
    cancel: threading.Event | None = None,
    cache_dir: Path | None = None,
    endpoint: str | None = None,
) -> Path:
    """Download an offered QA model into the HF cache through the models layer (resumes, cancels)."""
    from omni_web.models.download import download_model

    return download_model(
        _known(size),
        progress=progress,
        cancel=cancel,  # type: ignore[arg-type]
        cache_dir=cache_dir,
        endpoint=endpoint,
    )


def plan_asr_removal(sizes: list[str], *, cache_dir: Path | str | None = None) -> RemovalPlan:
    """The plan that removes offered QA models from the HF cache (nothing is deleted until ``execute``)."""
    from omni_web.models import plan_removal

    return plan_removal([_known(size).key for size in sizes], cache_dir=cache_dir, lookup=_known)  # type: ignore[arg-type]
