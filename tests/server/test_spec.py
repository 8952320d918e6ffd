"""The serve command is planned without launching anything: spec, argv, shell line."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from omni_web.catalog import CATALOG, get_entry
from omni_web.paths import CONFIGS_DIR
from omni_web.server.spec import build_argv, build_serve_spec, client_host, shell_command
from omni_web.settings import Settings

SGL = Path("/data/envs/sglomni/bin/sgl-omni")


def _flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


@pytest.mark.parametrize("entry", CATALOG, ids=lambda e: e.key)
def test_argv_for_every_catalog_entry(entry) -> None:
    settings = Settings(server_host="127.0.0.1", server_port=8100)
    spec = build_serve_spec(entry, settings=settings, compute_capability=(9, 0))
    argv = build_argv(spec, sgl_omni=SGL)
    assert argv[:2] == [str(SGL), "serve"]
    assert _flag(argv, "--model-path") == entry.repo_id
    assert _flag(argv, "--host") == "127.0.0.1"
    assert _flag(argv, "--port") == "8100"
    assert "--mem-fraction-static" not in argv
    if entry.config_file:
        config = Path(_flag(argv, "--config"))
        assert config == CONFIGS_DIR / entry.config_file
        assert config.is_file(), f"vendored config {config} is missing"
    else:
        assert "--config" not in argv
    # Every token is a flag followed by its value: no stray words, no shell syntax.
    assert len(argv[2:]) % 2 == 0
    assert all(tok.startswith("--") for tok in argv[2::2])


def test_mem_fraction_static_only_when_the_user_sets_it() -> None:
    entry = get_entry("higgs_audio_v3_tts")
    spec = build_serve_spec(entry, settings=Settings(mem_fraction_static=0.65), compute_capability=None)
    argv = build_argv(spec, sgl_omni=SGL)
    assert _flag(argv, "--mem-fraction-static") == "0.65"
    assert "--mem_fraction_static" not in argv  # 0.1.9 has the hyphen spelling only


def test_port_argument_overrides_the_setting() -> None:
    spec = build_serve_spec(
        get_entry("moss_tts"), settings=Settings(server_port=8100), compute_capability=None, port=9123
    )
    assert _flag(build_argv(spec, sgl_omni=SGL), "--port") == "9123"
    assert spec.base_url == "http://127.0.0.1:9123"


@pytest.mark.parametrize("cc", [(8, 9), (9, 0), (12, 0)])
def test_zonos2_takes_no_config_on_cc_8_9_and_up(cc) -> None:
    spec = build_serve_spec(get_entry("zonos2"), settings=Settings(), compute_capability=cc)
    argv = build_argv(spec, sgl_omni=SGL)
    assert "--config" not in argv
    assert spec.tag == ""
    assert spec.model_label == "ZONOS2"


@pytest.mark.parametrize("cc", [(8, 6), (8, 0), (7, 5)])
def test_zonos2_takes_the_bf16_config_below_8_9(cc) -> None:
    spec = build_serve_spec(get_entry("zonos2"), settings=Settings(), compute_capability=cc)
    argv = build_argv(spec, sgl_omni=SGL)
    assert _flag(argv, "--config") == str(CONFIGS_DIR / "zonos2_bf16.yaml")
    assert spec.tag == "bf16 fallback"
    assert spec.model_label == "ZONOS2 (bf16 fallback)"
    (note,) = spec.notes
    assert f"GPU compute capability {cc[0]}.{cc[1]} < 8.9" in note
    assert "configs/zonos2_bf16.yaml" in note and "FP8" in note


def test_zonos2_without_a_known_gpu_uses_the_default_and_says_so() -> None:
    spec = build_serve_spec(get_entry("zonos2"), settings=Settings(), compute_capability=None)
    assert "--config" not in build_argv(spec, sgl_omni=SGL)
    assert spec.tag == ""
    (note,) = spec.notes
    assert "No GPU compute capability is known" in note and "zonos2_bf16.yaml" in note


def test_models_without_a_fallback_ignore_the_gpu() -> None:
    entry = get_entry("qwen3_tts_0_6b_customvoice")
    old = build_serve_spec(entry, settings=Settings(), compute_capability=(7, 5))
    new = build_serve_spec(entry, settings=Settings(), compute_capability=(9, 0))
    assert old.config_path == new.config_path == CONFIGS_DIR / "qwen3_tts.yaml"
    assert old.notes == new.notes
    assert "memory-safe profile" in old.notes[0]
    assert old.tag == ""


@pytest.mark.parametrize(("vram_gb", "config", "profile", "width"), [
    (None, "qwen3_tts.yaml", "memory-safe", None),
    (24.0, "qwen3_tts.yaml", "memory-safe", None),
    (79.2, "qwen3_tts_throughput.yaml", "throughput", 64),
])
def test_the_throughput_profile_is_chosen_by_the_gpus_memory(vram_gb: float | None, config: str, profile: str,
                                                              width: int | None) -> None:
    spec = build_serve_spec(get_entry("qwen3_tts_1_7b_base"), settings=Settings(), compute_capability=(9, 0),
                            vram_gb=vram_gb)
    assert spec.config_path == CONFIGS_DIR / config
    assert ["--config", str(CONFIGS_DIR / config)] == build_argv(spec, sgl_omni=SGL)[4:6]
    assert spec.profile == profile and spec.width == width
    # The Server tab's badge and the model's label say which profile runs.
    assert spec.tag == ("throughput profile" if profile == "throughput" else "")
    assert spec.profile_line.startswith(f"{profile.capitalize()} profile (configs/{config})")
    if width:
        assert spec.profile_line.endswith(": 64 requests at once")
        assert "GPU memory 79 GB >= 40 GB" in spec.notes[-1]


def test_a_fallback_for_an_old_gpu_comes_before_any_profile() -> None:
    spec = build_serve_spec(get_entry("zonos2"), settings=Settings(), compute_capability=(8, 6), vram_gb=80.0)
    assert spec.tag == "bf16 fallback" and spec.profile == ""


def test_shell_command_quotes_what_a_shell_would_split() -> None:
    argv = ["/home/me/My Apps/envs/sglomni/bin/sgl-omni", "serve", "--model-path", "a'b", "--port", "8100"]
    line = shell_command(argv)
    assert shlex.split(line) == argv
    assert line.startswith("'/home/me/My Apps/envs/sglomni/bin/sgl-omni' serve")


def test_shell_command_of_a_real_spec_round_trips() -> None:
    spec = build_serve_spec(get_entry("qwen3_tts_0_6b_base"), settings=Settings(), compute_capability=None)
    argv = build_argv(spec, sgl_omni=SGL)
    assert shlex.split(shell_command(argv)) == argv


@pytest.mark.parametrize(
    ("host", "expected"),
    [("0.0.0.0", "127.0.0.1"), ("", "127.0.0.1"), ("::", "[::1]"), ("::1", "[::1]"), ("gpu-box", "gpu-box")],
)
def test_client_host(host: str, expected: str) -> None:
    assert client_host(host) == expected
