from __future__ import annotations

import pytest
import yaml

from omni_web import catalog
from omni_web.catalog import CATALOG, VoiceMode, entry_for_repo, get_entry
from omni_web.errors import UnknownModel
from omni_web.paths import CONFIGS_DIR

# The appendix of the API doc: stage names per config class (sglang-omni 0.1.9).
STAGES = {
    "Qwen3TTSPipelineConfig": {"preprocessing", "tts_engine", "vocoder"},
    "HiggsTtsPipelineConfig": {"preprocessing", "audio_encoder", "tts_engine", "vocoder"},
    "MossTTSPipelineConfig": {"preprocessing", "tts_engine", "vocoder"},
    "MossTTSLocalPipelineConfig": {"preprocessing", "tts_engine", "vocoder"},
    "VoxtralTTSPipelineConfig": {"preprocessing", "tts_generation", "vocoder"},
    "DotsTTSPipelineConfig": {"preprocessing", "reference_encode", "latent_engine", "vocoder"},
    "S2ProPipelineConfig": {"preprocessing", "tts_engine", "vocoder"},
    "Zonos2PipelineConfig": {"preprocessing", "speaker_encode", "tts_engine", "vocoder"},
}


def test_catalog_has_the_seed_models_in_order() -> None:
    assert catalog.keys() == [
        "qwen3_tts_0_6b_customvoice",
        "qwen3_tts_0_6b_base",
        "qwen3_tts_1_7b_base",
        "qwen3_tts_1_7b_voicedesign",
        "higgs_audio_v3_tts",
        "moss_tts",
        "moss_tts_local",
        "voxtral_tts",
        "dots_tts_mf",
        "fish_s2_pro",
        "zonos2",
    ]


def test_pin_lives_in_one_place() -> None:
    assert catalog.SGLANG_OMNI_VERSION == "0.1.9"
    assert catalog.SGLANG_OMNI_PYTHON_MIN == (3, 11)
    assert catalog.SGLANG_OMNI_PYTHON_MAX_EXCLUSIVE == (3, 13)


def test_seed_specific_values() -> None:
    higgs = get_entry("higgs_audio_v3_tts")
    assert (higgs.request_max_new_tokens, higgs.max_words_per_request) == (3000, 80)
    assert get_entry("zonos2").request_max_new_tokens == 12288
    assert get_entry("moss_tts_local").sample_rate_hz == 48000
    assert get_entry("zonos2").sample_rate_hz == 44100
    assert get_entry("qwen3_tts_0_6b_base").system_binaries == ("sox",)
    assert get_entry("fish_s2_pro").system_binaries == ("ffmpeg",)
    assert "qwen-tts==0.1.1" in get_entry("qwen3_tts_1_7b_base").companion_packages
    assert get_entry("voxtral_tts").voice_mode is VoiceMode.PRESET_VOICES
    assert get_entry("qwen3_tts_1_7b_voicedesign").capabilities == ("design",)
    assert get_entry("fish_s2_pro").capabilities == ("tts", "clone")


def test_unknown_key_lists_the_valid_ones() -> None:
    with pytest.raises(UnknownModel) as info:
        get_entry("qwen4")
    assert "qwen3_tts_0_6b_customvoice" in str(info.value)


def test_entry_for_repo_ignores_case_and_revision() -> None:
    assert entry_for_repo("zyphra/zonos2@main").key == "zonos2"
    assert entry_for_repo("nobody/nothing") is None


@pytest.mark.parametrize("entry", CATALOG, ids=lambda e: e.key)
def test_every_vendored_config_uses_real_stage_names(entry: catalog.CatalogEntry) -> None:
    for name in filter(None, (entry.config_file, entry.fallback_config_file)):
        data = yaml.safe_load((CONFIGS_DIR / name).read_text())
        assert data["config_cls"] == entry.config_cls
        assert data["model_path"]
        assert set(data["stages"]) <= STAGES[entry.config_cls]


def test_memory_fractions_are_the_intended_ones() -> None:
    def engine(name: str, stage: str) -> dict:
        return yaml.safe_load((CONFIGS_DIR / name).read_text())["stages"][stage]

    assert engine("qwen3_tts.yaml", "tts_engine")["engine"]["mem_fraction_static"] == 0.70
    assert engine("higgs_audio_v3_tts.yaml", "tts_engine")["gpu_memory_fraction"] == 0.80
    assert engine("higgs_audio_v3_tts.yaml", "tts_engine")["factory"]["max_new_tokens"] == 3000
    assert engine("moss_tts.yaml", "tts_engine")["engine"]["mem_fraction_static"] == 0.87
    assert engine("voxtral_tts.yaml", "tts_generation")["engine"]["mem_fraction_static"] == 0.70
    zonos = engine("zonos2_bf16.yaml", "tts_engine")
    assert zonos["factory"]["fp8"] is False and zonos["engine"]["mem_fraction_static"] == 0.70
    assert yaml.safe_load((CONFIGS_DIR / "moss_tts_local.yaml").read_text())["stages"] == {}
