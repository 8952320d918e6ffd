"""What the NVIDIA driver says about this machine's GPUs (NVML, via ``nvidia-ml-py``), and
whether each catalog model fits.

:func:`probe_gpus` never raises: when NVML does not answer (no driver, no GPU, package missing)
the probe carries a loud warning instead, and the app keeps working, since a remote
SGLang-Omni server needs no local GPU. Fit hints read the catalog (``min_vram_gb``,
``fallback_below_cc``, ``vram_note``); they judge GPU 0 because sglang-omni's default configs
place every stage on GPU 0.
"""

from __future__ import annotations

import contextlib
import enum
from dataclasses import dataclass
from typing import Any

from omni_web.catalog import CatalogEntry

__all__ = [
    "FitHint",
    "FitLevel",
    "GpuInfo",
    "GpuProbe",
    "fit_hint",
    "probe_gpus",
]

_GIB = 1024**3
# A card sold as "16 GB" reports 15.6-16 GiB total; this much below the catalog figure still fits.
_FIT_TOLERANCE_GB = 0.5


@dataclass(frozen=True, slots=True)
class GpuInfo:
    """One GPU as NVML reports it."""

    index: int
    name: str
    compute_capability: tuple[int, int]
    total_memory_bytes: int
    free_memory_bytes: int

    @property
    def compute_capability_str(self) -> str:
        """``8.9``."""
        return f"{self.compute_capability[0]}.{self.compute_capability[1]}"

    @property
    def total_memory_gib(self) -> float:
        """Total memory in GiB (what a "24 GB card" has 24 of)."""
        return self.total_memory_bytes / _GIB

    @property
    def total_memory_str(self) -> str:
        """``24.0 GiB``."""
        return f"{self.total_memory_bytes / _GIB:.1f} GiB"

    @property
    def free_memory_str(self) -> str:
        """``23.1 GiB``."""
        return f"{self.free_memory_bytes / _GIB:.1f} GiB"

    @property
    def summary(self) -> str:
        """One line: index, name, compute capability, memory."""
        return (
            f"GPU {self.index}: {self.name}, compute capability {self.compute_capability_str}, "
            f"{self.total_memory_str} total, {self.free_memory_str} free"
        )


@dataclass(frozen=True, slots=True)
class GpuProbe:
    """The driver version and GPUs, or a warning saying why there are none."""

    driver_version: str | None
    gpus: tuple[GpuInfo, ...]
    warning: str = ""

    @property
    def available(self) -> bool:
        """True when at least one GPU answered."""
        return bool(self.gpus)

    @property
    def vram_gb(self) -> float | None:
        """GPU 0's memory in GiB (what picks a throughput profile), or None without a GPU."""
        return self.gpus[0].total_memory_gib if self.gpus else None

    @property
    def compute_capability(self) -> tuple[int, int] | None:
        """GPU 0's compute capability (every server stage runs there), or None without a GPU."""
        return self.gpus[0].compute_capability if self.gpus else None


class FitLevel(enum.StrEnum):
    """How well a model fits the local GPU."""

    FITS = "fits"
    TOO_SMALL = "too_small"
    NO_GPU = "no_gpu"


@dataclass(frozen=True, slots=True)
class FitHint:
    """Whether a catalog model fits GPU 0, with the catalog's note and any fallback it triggers."""

    key: str
    level: FitLevel
    message: str
    uses_fallback: bool = False

    @property
    def fits(self) -> bool:
        """True when GPU 0 has the memory the catalog asks for."""
        return self.level is FitLevel.FITS


def _text(value: Any) -> str:
    """NVML strings are ``str`` in current nvidia-ml-py and ``bytes`` in old releases."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _no_gpu(reason: str) -> GpuProbe:
    warning = (
        f"NO NVIDIA GPU: NVML did not answer ({reason}). SGLang-Omni needs an NVIDIA GPU with a recent "
        "driver to serve models on this machine. Everything else keeps working: models can be "
        "installed, and a remote SGLang-Omni server (Settings: remote URL, CLI: --api-url) stays usable."
    )
    return GpuProbe(driver_version=None, gpus=(), warning=warning)


def _read_gpu(nvml: Any, index: int) -> GpuInfo:
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    major, minor = nvml.nvmlDeviceGetCudaComputeCapability(handle)
    memory = nvml.nvmlDeviceGetMemoryInfo(handle)
    return GpuInfo(
        index=index,
        name=_text(nvml.nvmlDeviceGetName(handle)),
        compute_capability=(int(major), int(minor)),
        total_memory_bytes=int(memory.total),
        free_memory_bytes=int(memory.free),
    )


def probe_gpus(nvml: Any = None) -> GpuProbe:
    """Ask NVML for the driver version and every GPU; never raises.

    Args:
        nvml: a module-like object with pynvml's functions (tests pass a fake); ``import pynvml``
            when None.

    Returns:
        A probe with the GPUs, or with no GPUs and a loud ``warning`` naming the cause.
    """
    if nvml is None:
        try:
            import pynvml as nvml  # nvidia-ml-py; heavy and optional, so imported here
        except ImportError as exc:
            return _no_gpu(f"the nvidia-ml-py package is not installed: {exc}")
    nvml_error = getattr(nvml, "NVMLError", None)
    caught: tuple[type[BaseException], ...] = (OSError, AttributeError)
    if isinstance(nvml_error, type) and issubclass(nvml_error, BaseException):
        caught = (nvml_error, *caught)
    try:
        nvml.nvmlInit()
    except caught as exc:
        return _no_gpu(str(exc) or type(exc).__name__)
    try:
        driver = _text(nvml.nvmlSystemGetDriverVersion())
        count = int(nvml.nvmlDeviceGetCount())
        gpus, failures = [], []
        for index in range(count):
            try:
                gpus.append(_read_gpu(nvml, index))
            except caught as exc:
                failures.append(f"GPU {index}: {exc}")
    except caught as exc:
        return _no_gpu(str(exc) or type(exc).__name__)
    finally:
        # Shutting NVML down can fail after a failed query; nothing is left to release then.
        with contextlib.suppress(*caught):
            nvml.nvmlShutdown()
    if not gpus:
        reason = "; ".join(failures) if failures else f"driver {driver} reports no GPU"
        probe = _no_gpu(reason)
        return GpuProbe(driver_version=driver, gpus=(), warning=probe.warning)
    warning = f"Some GPUs could not be read: {'; '.join(failures)}" if failures else ""
    return GpuProbe(driver_version=driver, gpus=tuple(gpus), warning=warning)


def fit_hint(entry: CatalogEntry, probe: GpuProbe) -> FitHint:
    """Judge ``entry`` against GPU 0: memory from ``min_vram_gb``, the low-CC fallback config."""
    if not probe.gpus:
        return FitHint(entry.key, FitLevel.NO_GPU, "no local GPU; usable through a remote server only")
    gpu = probe.gpus[0]
    notes: list[str] = []
    fallback = bool(
        entry.fallback_below_cc
        and entry.fallback_config_file
        and gpu.compute_capability < entry.fallback_below_cc
    )
    if fallback:
        low = ".".join(map(str, entry.fallback_below_cc or ()))
        notes.append(
            f"compute capability {gpu.compute_capability_str} < {low}: runs the "
            f"{entry.fallback_tag or 'fallback'} "
            f"config ({entry.fallback_config_file})"
        )
    if entry.min_vram_gb and gpu.total_memory_gib + _FIT_TOLERANCE_GB < entry.min_vram_gb:
        notes.insert(0, f"needs about {entry.min_vram_gb:g} GB, GPU 0 has {gpu.total_memory_str}")
        level = FitLevel.TOO_SMALL
    else:
        level = FitLevel.FITS
        if entry.min_vram_gb:
            notes.insert(0, f"about {entry.min_vram_gb:g} GB needed, GPU 0 has {gpu.total_memory_str}")
    if entry.vram_note:
        notes.append(entry.vram_note)
    return FitHint(entry.key, level, "; ".join(notes), uses_fallback=fallback)
