"""NVML probe with NVML absent, failing and present (a fake library object), and fit hints."""

from __future__ import annotations

import sys

import pytest

from omni_web.catalog import get_entry
from omni_web.gpu import FitLevel, GpuInfo, GpuProbe, fit_hint, probe_gpus
from tests.fakes.fake_nvml import FakeNvml, FakeNVMLError

GIB = 1024**3


RTX_4090 = ("NVIDIA GeForce RTX 4090", (8, 9), 24 * GIB, 23 * GIB)
RTX_3090 = ("NVIDIA GeForce RTX 3090", (8, 6), 24 * GIB, 22 * GIB)
RTX_4080 = ("NVIDIA GeForce RTX 4080", (8, 9), int(15.99 * GIB), 15 * GIB)
RTX_3060 = ("NVIDIA GeForce RTX 3060", (8, 6), 12 * GIB, 11 * GIB)


def test_probe_reads_driver_and_every_gpu() -> None:
    nvml = FakeNvml([RTX_4090, RTX_3060], as_bytes=True)
    probe = probe_gpus(nvml)
    assert probe.available and probe.warning == ""
    assert probe.driver_version == "550.54.15"
    first, second = probe.gpus
    assert first == GpuInfo(0, "NVIDIA GeForce RTX 4090", (8, 9), 24 * GIB, 23 * GIB)
    assert probe.compute_capability == (8, 9)  # GPU 0's: the server's stages all run there
    assert second.compute_capability_str == "8.6" and second.total_memory_str == "12.0 GiB"
    assert "GPU 1: NVIDIA GeForce RTX 3060, compute capability 8.6" in second.summary
    assert nvml.calls == ["init", "shutdown"]


def test_nvml_that_does_not_answer_gives_a_loud_warning_not_an_exception() -> None:
    probe = probe_gpus(FakeNvml([], init_error=FakeNVMLError("NVML Shared Library Not Found")))
    assert not probe.available and probe.gpus == () and probe.driver_version is None
    assert probe.compute_capability is None
    assert probe.warning.startswith("NO NVIDIA GPU")
    assert "NVML Shared Library Not Found" in probe.warning
    assert "SGLang-Omni needs an NVIDIA GPU" in probe.warning and "remote" in probe.warning


def test_missing_nvidia_ml_py_package_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` raise ImportError
    probe = probe_gpus()
    assert not probe.available and "nvidia-ml-py" in probe.warning


def test_real_nvml_on_this_machine_never_raises() -> None:
    probe = probe_gpus()  # the real pynvml: no GPU here, a GPU on a workstation
    assert isinstance(probe, GpuProbe)
    assert probe.available or probe.warning.startswith("NO NVIDIA GPU")


def test_driver_without_gpus_and_a_lost_gpu() -> None:
    none = probe_gpus(FakeNvml([]))
    assert not none.available and "reports no GPU" in none.warning and none.driver_version == "550.54.15"
    partly = probe_gpus(FakeNvml([RTX_3090, RTX_4090], broken_index=0))
    assert [gpu.index for gpu in partly.gpus] == [1]
    assert "GPU 0: GPU is lost" in partly.warning


def test_fit_hints_follow_the_catalog() -> None:
    fish, zonos, qwen = get_entry("fish_s2_pro"), get_entry("zonos2"), get_entry("qwen3_tts_0_6b_base")
    on_4090, on_3090, on_4080 = (probe_gpus(FakeNvml([gpu])) for gpu in (RTX_4090, RTX_3090, RTX_4080))

    assert fit_hint(fish, on_4090).fits
    small = fit_hint(fish, on_4080)
    assert (
        small.level is FitLevel.TOO_SMALL and "needs about 24 GB" in small.message and "#359" in small.message
    )

    ada = fit_hint(zonos, on_4090)
    assert ada.fits and not ada.uses_fallback
    ampere = fit_hint(zonos, on_3090)
    assert ampere.fits and ampere.uses_fallback
    assert "8.6 < 8.9" in ampere.message and "zonos2_bf16.yaml" in ampere.message
    assert "16 GB is the practical floor" in ampere.message
    assert fit_hint(zonos, on_4080).fits  # a 16 GB-class card reports a little under 16 GiB

    assert fit_hint(qwen, GpuProbe(None, ())).level is FitLevel.NO_GPU
