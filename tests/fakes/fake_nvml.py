"""A stand-in for the ``pynvml`` module (nvidia-ml-py): the calls ``omni_web.gpu`` makes."""

from __future__ import annotations

from types import SimpleNamespace

__all__ = ["FakeNVMLError", "FakeNvml"]


class FakeNVMLError(Exception):
    """Stands in for pynvml.NVMLError."""


class FakeNvml:
    """The subset of pynvml that probe_gpus calls, over a list of (name, cc, total, free)."""

    NVMLError = FakeNVMLError

    def __init__(self, gpus, *, driver="550.54.15", init_error=None, broken_index=None, as_bytes=False):
        self.gpus = gpus
        self.driver = driver
        self.init_error = init_error
        self.broken_index = broken_index
        self.as_bytes = as_bytes
        self.calls: list[str] = []
        self.utilization: list[int] = []  # percent busy, one per sample (the last repeats)

    def _text(self, value: str):
        return value.encode() if self.as_bytes else value

    def nvmlInit(self):  # noqa: N802 - pynvml's names
        self.calls.append("init")
        if self.init_error is not None:
            raise self.init_error

    def nvmlShutdown(self):  # noqa: N802
        self.calls.append("shutdown")

    def nvmlSystemGetDriverVersion(self):  # noqa: N802
        return self._text(self.driver)

    def nvmlDeviceGetCount(self):  # noqa: N802
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index):  # noqa: N802
        if index == self.broken_index:
            raise FakeNVMLError("GPU is lost")
        return index

    def nvmlDeviceGetName(self, handle):  # noqa: N802
        return self._text(self.gpus[handle][0])

    def nvmlDeviceGetCudaComputeCapability(self, handle):  # noqa: N802
        return self.gpus[handle][1]

    def nvmlDeviceGetMemoryInfo(self, handle):  # noqa: N802
        _, _, total, free = self.gpus[handle]
        return SimpleNamespace(total=total, free=free, used=total - free)

    def nvmlDeviceGetUtilizationRates(self, handle):  # noqa: N802
        asked = self.calls.count("utilization")
        self.calls.append("utilization")
        busy = self.utilization[min(asked, len(self.utilization) - 1)] if self.utilization else 0
        return SimpleNamespace(gpu=busy, memory=busy)
