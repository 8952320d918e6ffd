"""Where the QA recogniser runs: CUDA float16 when it fits beside the TTS server, else CPU int8."""

from __future__ import annotations

from omni_web.gpu import GpuInfo, GpuProbe, probe_gpus
from omni_web.qa.asr_models import QA_ASR_MODELS, asr_model, choose_asr_device
from tests.fakes.fake_nvml import FakeNvml

_MB = 1024 * 1024


def _probe(*free_mb: int) -> GpuProbe:
    gpus = tuple(GpuInfo(i, "NVIDIA L4", (8, 9), 24000 * _MB, free * _MB) for i, free in enumerate(free_mb))
    return GpuProbe("550.54.15", gpus)


def test_the_offered_sizes_run_from_tiny_en_to_large_v3_turbo() -> None:
    sizes = [m.size for m in QA_ASR_MODELS]
    assert sizes[0] == "tiny.en" and {"small.en", "distil-large-v3", "large-v3-turbo"} <= set(sizes)
    assert asr_model("tiny.en").english_only and not asr_model("large-v3-turbo").english_only
    assert asr_model("/models/my-whisper") is None


def test_a_model_that_fits_beside_the_server_runs_on_cuda_in_float16() -> None:
    choice = choose_asr_device("small.en", requested=None, probe=lambda: _probe(6000))
    assert (choice.device, choice.compute_type) == ("cuda", "float16")
    assert "GPU 0" in choice.note and "6000 MB free" in choice.note


def test_a_gpu_the_server_fills_sends_the_model_to_the_cpu_with_the_reason() -> None:
    # The TTS server holds 22.5 of 24 GB: large-v3-turbo (~2.5 GB + headroom) does not fit.
    choice = choose_asr_device("large-v3-turbo", requested="cuda", probe=lambda: _probe(1500))
    assert (choice.device, choice.compute_type) == ("cpu", "int8")
    assert "1500 MB free beside the TTS server" in choice.note and "smaller QA model" in choice.note
    # tiny.en fits in the same room.
    assert choose_asr_device("tiny.en", requested=None, probe=lambda: _probe(1500)).device == "cpu"
    assert choose_asr_device("tiny.en", requested=None, probe=lambda: _probe(1700)).device == "cuda"


def test_the_gpu_with_the_most_free_memory_is_chosen() -> None:
    choice = choose_asr_device("distil-large-v3", requested=None, probe=lambda: _probe(800, 9000))
    assert choice.device == "cuda" and "GPU 1" in choice.note


def test_no_gpu_and_a_cpu_setting_mean_the_cpu() -> None:
    called = []

    def probe() -> GpuProbe:
        called.append(1)
        return _probe(20000)

    assert choose_asr_device("small.en", requested="cpu", probe=probe).device == "cpu" and not called
    none = choose_asr_device(
        "small.en", requested=None, probe=lambda: GpuProbe(None, (), "NVML is not installed")
    )
    assert none.device == "cpu" and "NVML is not installed" in none.note


def test_the_real_nvml_probe_reading_a_fake_nvml_drives_the_choice() -> None:
    nvml = FakeNvml([("NVIDIA RTX 4090", (8, 9), 24 * 1024 * _MB, 3 * 1024 * _MB)])
    choice = choose_asr_device("small.en", requested=None, probe=lambda: probe_gpus(nvml))
    assert choice.device == "cuda" and "NVIDIA RTX 4090" in choice.note


def test_a_qa_model_downloads_into_the_hf_cache_shows_its_size_and_is_removed(tmp_path) -> None:
    from omni_web.qa.asr_models import asr_model_rows, download_asr_model, plan_asr_removal
    from tests.fakes.fake_hf_hub import FakeHub, FakeRepo

    cache = tmp_path / "hf-cache"
    weights = {"config.json": b"{}", "model.bin": b"\x01" * 200_000, "tokenizer.json": b"{}"}
    with FakeHub([FakeRepo("Systran/faster-whisper-base.en", weights)]) as hub:
        assert dict((m.size, c) for m, c in asr_model_rows(cache_dir=cache))["base.en"] is None
        folder = download_asr_model("base.en", cache_dir=cache, endpoint=hub.url)
    assert (folder / "model.bin").stat().st_size == 200_000
    rows = {m.size: c for m, c in asr_model_rows(cache_dir=cache)}
    assert (
        rows["base.en"] is not None
        and rows["base.en"].complete
        and rows["base.en"].size_on_disk_bytes >= 200_000
    )
    assert rows["tiny.en"] is None
    plan = plan_asr_removal(["base.en"], cache_dir=cache)
    assert plan.keys == ("whisper-base.en",) and "faster-whisper base.en" in plan.summary
    plan.execute()
    assert {m.size: c for m, c in asr_model_rows(cache_dir=cache)}["base.en"] is None


def test_a_cuda_load_that_fails_falls_back_to_the_cpu(monkeypatch) -> None:
    from omni_web.errors import VoiceError
    from omni_web.pipeline import quality

    devices = []

    def load(model: str, *, device: str, workers: int):
        devices.append(device)
        if device == "cuda":
            raise VoiceError("CUDA driver version is insufficient for CUDA runtime version")
        return "cpu model"

    monkeypatch.setattr(quality, "load_recogniser", load)
    assert quality._load_on("small.en", "cuda", 1) == "cpu model" and devices == ["cuda", "cpu"]
