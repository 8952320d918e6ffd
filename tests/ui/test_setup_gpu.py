"""Setup tab with GPUs: a fake NVML object injected through the UI context drives the GPU table
and the per-model fit hints; the Server tab's command line follows the same probe."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from omni_web.paths import REPO_ROOT
from tests.fakes.fake_nvml import FakeNvml
from tests.ui.conftest import RunningApp, launch_app
from tests.ui.helpers import table_rows

GIB = 1024**3
# An Ampere card (compute capability 8.6) with 16 GB, and a second, smaller one.
A4000 = ("NVIDIA RTX A4000", (8, 6), 16 * GIB, 15 * GIB)
RTX_3060 = ("NVIDIA GeForce RTX 3060", (8, 6), 12 * GIB, int(11.5 * GIB))


@pytest.fixture(scope="module")
def nvml() -> FakeNvml:
    return FakeNvml([A4000, RTX_3060], driver="550.54.15")


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, nvml: FakeNvml) -> Iterator[RunningApp]:
    with launch_app(tmp_path_factory.mktemp("setup-gpu-app"), nvml=nvml) as running:
        yield running


def _gpu_tables(app: RunningApp) -> tuple[list[list[str]], dict[str, list[str]], str]:
    _backend, gpus, _tools = app.client().predict(api_name="/setup_report")
    gpu_table, fit_table = table_rows(gpus)
    return gpu_table, {row[0]: row[1:] for row in fit_table[1:]}, gpus


def test_gpu_table_lists_every_gpu_from_nvml(app, nvml):
    gpu_table, _fit, html = _gpu_tables(app)
    assert gpu_table == [
        ["#", "GPU", "Compute capability", "Memory", "Free"],
        ["0", "NVIDIA RTX A4000", "8.6", "16.0 GiB", "15.0 GiB"],
        ["1", "NVIDIA GeForce RTX 3060", "8.6", "12.0 GiB", "11.5 GiB"],
    ]
    assert "NVIDIA driver 550.54.15" in html and "NO NVIDIA GPU" not in html
    assert nvml.calls[-2:] == ["init", "shutdown"]  # the injected object was asked, and released


def test_fit_hints_judge_gpu_0(app):
    _gpus, fit, _html = _gpu_tables(app)
    assert len(fit) == 11  # one row per catalog model
    fish_fit, fish_notes = fit["Fish Speech S2-Pro"]
    assert fish_fit == "too small"
    assert "needs about 24 GB, GPU 0 has 16.0 GiB" in fish_notes
    zonos_fit, zonos_notes = fit["ZONOS2"]
    assert zonos_fit == "fits bf16 fallback"
    assert "compute capability 8.6 < 8.9: runs the bf16 fallback config (zonos2_bf16.yaml)" in zonos_notes
    qwen_fit, qwen_notes = fit["Qwen3-TTS 0.6B Base"]
    assert qwen_fit == "fits" and "GPU 0 has 16.0 GiB" in qwen_notes
    assert fit["Higgs Audio v3 TTS"][0] == "fits"  # 16 GB needed, 16 GB there


def test_server_command_uses_the_same_probe(app):
    command = app.client().predict("zonos2", api_name="/server_command")
    comment, line = command.strip().splitlines()
    assert comment.startswith("# GPU compute capability 8.6 < 8.9")
    assert (
        f"sgl-omni serve --model-path Zyphra/ZONOS2 --config {REPO_ROOT / 'configs' / 'zonos2_bf16.yaml'} "
        in line
    )
