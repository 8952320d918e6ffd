"""GPU utilisation and memory over a job, sampled from NVML while the book renders.

The figure a user compares is absolute: audio seconds per GPU second. The renderer knows the
audio per wall second; NVML adds how busy the card was meanwhile (``nvmlDeviceGetUtilizationRates``,
the share of time a kernel ran) and how much memory the server held. Only a server on this
machine has its GPU here, so the job samples only then. No NVML, no samples: :meth:`GpuSampler.stop`
returns None and nothing else changes.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["GpuSampler", "GpuUsage"]

_GIB = 1024**3


@dataclass(frozen=True, slots=True)
class GpuUsage:
    """GPU 0 over a job: utilisation (percent of time busy) and memory in use."""

    samples: int
    util_mean_pct: float
    util_peak_pct: float
    memory_peak_bytes: int
    memory_total_bytes: int

    @property
    def line(self) -> str:
        """``GPU 87% busy (mean), memory up to 61.2 of 80.0 GiB``."""
        return (
            f"GPU {self.util_mean_pct:.0f}% busy (mean), memory up to {self.memory_peak_bytes / _GIB:.1f} of "
            f"{self.memory_total_bytes / _GIB:.1f} GiB"
        )

    def audio_per_gpu_s(self, audio_per_wall_s: float) -> float | None:
        """Audio seconds per GPU-busy second: the wall figure over the share of time the GPU worked."""
        return audio_per_wall_s / (self.util_mean_pct / 100) if self.util_mean_pct > 0 else None


class GpuSampler:
    """Samples GPU ``index`` every ``interval_s`` on a thread between :meth:`start` and :meth:`stop`.

    Args:
        nvml: a module-like object with pynvml's functions (tests pass a fake); ``import pynvml`` when None.
    """

    def __init__(self, *, index: int = 0, interval_s: float = 2.0, nvml: Any = None) -> None:
        self._index = index
        self._interval_s = interval_s
        self._nvml = nvml
        self._handle: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._util: list[float] = []
        self._memory_peak = 0
        self._memory_total = 0

    def start(self) -> bool:
        """Open NVML and start sampling; False (and nothing runs) without NVML or the GPU."""
        nvml = self._nvml
        if nvml is None:
            try:
                import pynvml as nvml  # nvidia-ml-py; optional, so imported here
            except ImportError:
                return False
        try:
            nvml.nvmlInit()
            self._handle = nvml.nvmlDeviceGetHandleByIndex(self._index)
        except Exception:  # noqa: BLE001 - pynvml raises its own NVMLError family; no GPU means no figures
            return False
        self._nvml = nvml
        self._sample()
        self._thread = threading.Thread(target=self._run, name="omni-gpu-sampler", daemon=True)
        self._thread.start()
        return True

    def snapshot(self) -> GpuUsage | None:
        """The figures so far (None before the first sample)."""
        with self._lock:
            if not self._util:
                return None
            return GpuUsage(
                len(self._util),
                sum(self._util) / len(self._util),
                max(self._util),
                self._memory_peak,
                self._memory_total,
            )

    def stop(self) -> GpuUsage | None:
        """Stop sampling and close NVML; the figures over the whole time it ran."""
        if self._thread is None:
            return None
        self._stop.set()
        self._thread.join(timeout=10)
        self._thread = None
        with contextlib.suppress(Exception):
            self._nvml.nvmlShutdown()
        return self.snapshot()

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            self._sample()

    def _sample(self) -> None:
        try:
            rates = self._nvml.nvmlDeviceGetUtilizationRates(self._handle)
            memory = self._nvml.nvmlDeviceGetMemoryInfo(self._handle)
        except Exception:  # noqa: BLE001 - a GPU lost mid-job leaves the figures so far
            return
        with self._lock:
            self._util.append(float(rates.gpu))
            self._memory_peak = max(self._memory_peak, int(memory.used))
            self._memory_total = int(memory.total)
