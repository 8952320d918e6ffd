"""GPU figures over a job, sampled from a fake NVML (the calls omni_web.gpuwatch makes)."""

from __future__ import annotations

import pytest

from omni_web.gpuwatch import GpuSampler, GpuUsage
from tests.fakes.fake_nvml import FakeNvml, FakeNVMLError

GIB = 1024**3


def test_samples_utilisation_and_peak_memory_until_stopped() -> None:
    nvml = FakeNvml([("NVIDIA H100 80GB HBM3", (9, 0), 80 * GIB, 20 * GIB)])
    nvml.utilization = [90, 80]
    sampler = GpuSampler(interval_s=3600, nvml=nvml)  # one sample at start, one more would take an hour
    assert sampler.start()
    usage = sampler.stop()
    assert usage is not None and usage.samples == 1
    assert usage.memory_peak_bytes == 60 * GIB and usage.memory_total_bytes == 80 * GIB
    assert usage.line == "GPU 90% busy (mean), memory up to 60.0 of 80.0 GiB"
    assert "shutdown" in nvml.calls


def test_no_nvml_means_no_figures() -> None:
    broken = FakeNvml([], init_error=FakeNVMLError("Driver Not Loaded"))
    sampler = GpuSampler(nvml=broken)
    assert not sampler.start()
    assert sampler.stop() is None and sampler.snapshot() is None


def test_audio_per_gpu_second_divides_by_the_busy_share() -> None:
    usage = GpuUsage(
        samples=10, util_mean_pct=50.0, util_peak_pct=100.0, memory_peak_bytes=1, memory_total_bytes=2
    )
    assert usage.audio_per_gpu_s(60.0) == pytest.approx(120.0)
    idle = GpuUsage(
        samples=1, util_mean_pct=0.0, util_peak_pct=0.0, memory_peak_bytes=1, memory_total_bytes=2
    )
    assert idle.audio_per_gpu_s(60.0) is None
