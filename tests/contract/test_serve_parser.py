"""Our configs and serve argv through the real `sgl-omni serve` parser and config loader.

Every `configs/*.yaml` and every argv `omni_web.server.spec.build_argv` can produce is handed to
the real sglang-omni 0.1.9 CLI in the contract venv, stopped just before launch
(`harness/run_serve_parser.py`). The resolved config is compared with the class defaults, and the
difference must be exactly the values we meant; deliberate mistakes must fail with the real text.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from omni_web.catalog import CATALOG, CatalogEntry
from omni_web.paths import CONFIGS_DIR
from omni_web.server.spec import build_argv, build_serve_spec
from omni_web.settings import Settings
from tests.contract.conftest import ParseResult, run_serve_parser
from tests.contract.setup_env import ContractVenv
from tests.test_catalog import STAGES

pytestmark = pytest.mark.contract

# What each vendored config is for: (stage, key, ...) -> value, and nothing else may differ from
# the upstream class defaults. moss_tts_local and dots_tts keep upstream on purpose.
INTENDED: dict[str, dict[tuple[str, ...], object]] = {
    "qwen3_tts.yaml": {("tts_engine", "engine", "mem_fraction_static"): 0.70},
    "higgs_audio_v3_tts.yaml": {
        ("tts_engine", "gpu_memory_fraction"): 0.80,
        ("tts_engine", "factory", "max_new_tokens"): 3000,
    },
    "moss_tts.yaml": {("tts_engine", "engine", "mem_fraction_static"): 0.87},
    "moss_tts_local.yaml": {},
    "voxtral_tts.yaml": {("tts_generation", "engine", "mem_fraction_static"): 0.70},
    "dots_tts.yaml": {},
    "fish_s2_pro.yaml": {("tts_engine", "engine", "mem_fraction_static"): 0.65},
    "fish_s2_pro_throughput.yaml": {
        ("tts_engine", "engine", "mem_fraction_static"): 0.80,
        ("tts_engine", "engine", "max_running_requests"): 64,
        ("tts_engine", "engine", "cuda_graph_max_bs"): 64,
    },
    "qwen3_tts_throughput.yaml": {
        ("tts_engine", "gpu_memory_fraction"): 0.85,
        ("tts_engine", "engine", "mem_fraction_static"): 0.80,
        ("tts_engine", "engine", "max_running_requests"): 64,
        ("tts_engine", "engine", "max_queued_requests"): 64,
        ("tts_engine", "engine", "cuda_graph_max_bs"): 64,
        ("vocoder", "process"): "vocoder",
        ("vocoder", "gpu_memory_fraction"): 0.10,
    },
    "zonos2_bf16.yaml": {
        ("tts_engine", "factory", "fp8"): False,
        ("tts_engine", "engine", "mem_fraction_static"): 0.70,
    },
}
CONFIG_FILES = sorted(p.name for p in CONFIGS_DIR.glob("*.yaml"))
USER_FRACTION = 0.6
COMPUTE_CAPABILITIES = (None, (8, 6), (9, 0))
FAKE_EXECUTABLE = Path("/opt/omni/envs/sglang-omni/bin/sgl-omni")


def _leaves(tree: object, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], object]:
    if isinstance(tree, dict):
        out: dict[tuple[str, ...], object] = {}
        for key, value in tree.items():
            out.update(_leaves(value, (*prefix, str(key))))
        return out
    return {prefix: tree}


def changed_from_upstream(report: dict) -> dict[tuple[str, ...], object]:
    """Leaf values where the resolved stages differ from the class defaults.

    Factory blocks take free-form keys (ZONOS2's `fp8`), so a key may exist on one side only.
    """
    resolved, default = _leaves(report["stages"]), _leaves(report["default_stages"])
    assert set(default) <= set(resolved)
    missing = object()
    return {path: value for path, value in resolved.items() if value != default.get(path, missing)}


def engine_stages(report: dict) -> list[str]:
    """Stages with an SGLang engine block (the ones `--mem-fraction-static` writes to)."""
    return [name for name, body in report["stages"].items() if "engine" in body]


def _builder_cases() -> dict[str, tuple[CatalogEntry, list[str], str | None, float | None]]:
    """Every distinct argv our serve builder produces, with what it was built from."""
    cases: dict[str, tuple[CatalogEntry, list[str], str | None, float | None]] = {}
    seen: set[tuple[str, ...]] = set()
    for entry in CATALOG:
        for cc in COMPUTE_CAPABILITIES:
            for fraction in (None, USER_FRACTION):
                settings = Settings(server_host="127.0.0.1", server_port=8100, mem_fraction_static=fraction)
                spec = build_serve_spec(entry, settings=settings, compute_capability=cc)
                argv = build_argv(spec, sgl_omni=FAKE_EXECUTABLE)
                assert argv[0] == str(FAKE_EXECUTABLE)
                if tuple(argv) in seen:
                    continue
                seen.add(tuple(argv))
                config = spec.config_path.name if spec.config_path else None
                cases[f"argv-{entry.key}-{config or 'noconfig'}-msf{fraction}"] = (
                    entry,
                    argv[1:],
                    config,
                    fraction,
                )
    return cases


BUILDER_CASES = _builder_cases()


def _config_argv(path: Path) -> list[str]:
    return ["serve", "--config", str(path), "--host", "127.0.0.1", "--port", "8100"]


@pytest.fixture(scope="module")
def parsed(
    contract_venv: ContractVenv, contract_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, ParseResult]:
    """All parser runs of this module, in one batch."""
    mistakes = tmp_path_factory.mktemp("mistakes")
    misspelt = mistakes / "qwen3_tts_misspelt.yaml"
    misspelt.write_text(
        (CONFIGS_DIR / "qwen3_tts.yaml").read_text().replace("  tts_engine:", "  tts_engnie:")
    )
    underscore = list(BUILDER_CASES[f"argv-qwen3_tts_0_6b_customvoice-qwen3_tts.yaml-msf{USER_FRACTION}"][1])
    underscore[underscore.index("--mem-fraction-static")] = "--mem_fraction_static"
    cases = {f"config-{name}": _config_argv(CONFIGS_DIR / name) for name in CONFIG_FILES}
    cases.update({key: argv for key, (_, argv, _, _) in BUILDER_CASES.items()})
    cases["mistake-misspelt-stage"] = _config_argv(misspelt)
    cases["mistake-underscore-flag"] = underscore
    cases["mistake-fraction-out-of-range"] = [
        *_config_argv(CONFIGS_DIR / "qwen3_tts.yaml"),
        "--mem-fraction-static",
        "1.5",
    ]
    return run_serve_parser(contract_venv, contract_env, cases)


def test_every_config_has_an_intended_table() -> None:
    assert set(INTENDED) == set(CONFIG_FILES)


@pytest.mark.parametrize("name", CONFIG_FILES)
def test_config_loads_with_its_class_and_real_stage_names(parsed: dict[str, ParseResult], name: str) -> None:
    result = parsed[f"config-{name}"]
    assert result.exit_code == 0, result.error_text
    report = result.report
    data = yaml.safe_load((CONFIGS_DIR / name).read_text())
    assert report["config_cls"] == data["config_cls"]
    assert report["model_path"] == data["model_path"]
    assert set(data["stages"]) <= set(report["stages"])
    # The stage table our catalog tests rely on is the real one.
    assert set(report["default_stages"]) == STAGES[data["config_cls"]]
    assert "error" not in report["placement"], report["placement"]
    for gpu in report["placement"]["gpus"].values():
        assert gpu["total_gpu_memory_fraction"] <= 1.0


@pytest.mark.parametrize("name", CONFIG_FILES)
def test_config_changes_exactly_the_intended_values(parsed: dict[str, ParseResult], name: str) -> None:
    report = parsed[f"config-{name}"].report
    assert changed_from_upstream(report) == INTENDED[name]


def test_higgs_budget_stays_within_one_card(parsed: dict[str, ParseResult]) -> None:
    report = parsed["config-higgs_audio_v3_tts.yaml"].report
    fractions = {name: body.get("gpu_memory_fraction") for name, body in report["stages"].items()}
    assert fractions == {"preprocessing": None, "audio_encoder": 0.03, "tts_engine": 0.80, "vocoder": 0.10}
    assert report["placement"]["gpus"]["0"]["total_gpu_memory_fraction"] == pytest.approx(0.93)


@pytest.mark.parametrize("case", sorted(BUILDER_CASES))
def test_builder_argv_resolves_to_what_we_meant(parsed: dict[str, ParseResult], case: str) -> None:
    entry, argv, config, fraction = BUILDER_CASES[case]
    result = parsed[case]
    assert result.exit_code == 0, result.error_text
    report = result.report
    assert report["config_cls"] == entry.config_cls
    assert report["model_path"] == entry.repo_id
    assert report["launch"]["host"] == "127.0.0.1" and report["launch"]["port"] == 8100
    intended = dict(INTENDED[config]) if config else {}
    if fraction is not None:
        # The user's --mem-fraction-static outranks each file's per-stage value, on every engine stage.
        intended = {path: value for path, value in intended.items() if path[-1] != "mem_fraction_static"}
        for stage in engine_stages(report):
            assert report["stages"][stage]["engine"]["mem_fraction_static"] == fraction
            intended[(stage, "engine", "mem_fraction_static")] = fraction
    assert changed_from_upstream(report) == intended


def test_zonos2_without_config_is_upstream_fp8(parsed: dict[str, ParseResult]) -> None:
    report = parsed["argv-zonos2-noconfig-msfNone"].report
    assert report["config_cls"] == "Zonos2PipelineConfig"
    assert changed_from_upstream(report) == {}
    assert report["stages"]["tts_engine"]["factory"].get("fp8") in (None, True)


def test_misspelt_stage_name_is_refused_with_the_real_text(parsed: dict[str, ParseResult]) -> None:
    result = parsed["mistake-misspelt-stage"]
    assert result.exit_code == 2
    assert (
        "Invalid value: stages.tts_engnie: no stage named 'tts_engnie' in Qwen3TTSPipelineConfig"
        in result.error_text
    )


def test_underscore_flag_is_refused_with_the_real_text(parsed: dict[str, ParseResult]) -> None:
    result = parsed["mistake-underscore-flag"]
    assert result.exit_code == 2
    assert (
        "Invalid value: 'mem_fraction_static' does not start from a stage name or a top-level "
        "configuration field of Qwen3TTSPipelineConfig" in result.error_text
    )


def test_fraction_out_of_range_is_refused(parsed: dict[str, ParseResult]) -> None:
    result = parsed["mistake-fraction-out-of-range"]
    assert result.exit_code == 2
    assert "Input should be less than 1" in result.error_text
