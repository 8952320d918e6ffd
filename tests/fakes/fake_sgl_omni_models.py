"""Model facts the fake ``sgl-omni`` needs: one :class:`Family` per sglang-omni 0.1.9 TTS package.

Stage names, config classes, variants, default stage fractions and default ``max_new_tokens`` come
from ``shared/docs/sglang-omni-api.md`` (sections 3 and the appendix). Output rates come from the
same doc. The codec frame rates (``tokens_per_s``) are the fake's model of "how many generated
tokens make one second of audio"; they are chosen so the documented caps come out right
(Higgs: 2048 frames ~ 27 s, ZONOS2: 1024 frames ~ 12 s, Qwen3-TTS: a 12.5 Hz codec).

A model path resolves to a :class:`ResolvedModel` the way the fake documents in
``fake_sgl_omni.py``: a Hub repo id through ``omni_web.catalog.entry_for_repo``, or a local
directory through its ``config.json``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from omni_web.catalog import entry_for_repo

__all__ = [
    "FAMILIES",
    "QWEN_CARD_SPEAKERS",
    "Family",
    "ResolvedModel",
    "family_for_config_cls",
    "is_qwen3_tts_base_model",
    "resolve_model_path",
]

# Qwen3-TTS CustomVoice speakers as the model card spells them (API doc 3).
QWEN_CARD_SPEAKERS = ("Vivian", "Serena", "Uncle_Fu", "Dylan", "Eric", "Ryan", "Aiden", "Ono_Anna", "Sohee")
# Voxtral presets named on its card (API doc 3); the server does not list them.
VOXTRAL_CARD_PRESETS = ("cheerful_female", "casual_female", "casual_male", "neutral_female", "neutral_male")
_MOSS_LOCAL_LANGUAGES = frozenset({
    "Cantonese", "Arabic", "Czech", "Danish", "Dutch", "Finnish", "Greek", "Hebrew", "Hindi", "Hungarian",
    "Macedonian", "Malay", "Persian (Farsi)", "Polish", "Romanian", "Swahili", "Swedish", "Tagalog", "Thai",
    "Turkish", "Vietnamese",
})


@dataclass(frozen=True, slots=True)
class Family:
    """One sglang-omni TTS model package, as the fake server models it."""

    package: str
    config_cls: str
    architecture: str
    stages: tuple[str, ...]
    engine_stage: str
    sample_rate_hz: int
    tokens_per_s: float
    default_max_new_tokens: int
    # (stage, default gpu_memory_fraction) for stages that declare one.
    stage_fractions: tuple[tuple[str, float], ...] = ()
    channels: int = 1
    # Default of `factory.max_new_tokens` on the engine stage; None = not a factory parameter.
    factory_max_new_tokens: int | None = None
    # Thinker KV capacity when FAKE_SGL_KV_CAPACITY is unset; None = never the binding limit.
    default_kv_capacity: int | None = None
    max_input_chars: int | None = 4096
    extra_languages: frozenset[str] = frozenset()
    variants: tuple[str, ...] = ()
    variant_classes: tuple[str, ...] = ()
    default_mem_fraction: float = 0.85
    # An explicit engine mem_fraction_static above this kills the boot (MOSS-TTS Local).
    max_mem_fraction: float | None = None
    processes: int = 1
    supports_uploaded_voices: bool = False
    requires_uploaded_voice_for_named_voice: bool = False
    reference_required_count: int | None = None
    reference_text_required: bool = False
    # Longest reference the model accepts, seconds (Higgs caps at 100 s).
    max_reference_s: float | None = None
    # Largest max_new_tokens a request may ask for (dots.tts max_generate_length).
    request_max_new_tokens_limit: int | None = None

    @property
    def top_level_fields(self) -> tuple[str, ...]:
        """Top-level PipelineConfig fields a dotted flag may start from."""
        return _TOP_LEVEL_FIELDS

    @property
    def languages(self) -> frozenset[str]:
        """Every `language` value the server accepts for this family."""
        return _BASE_LANGUAGES | self.extra_languages


_TOP_LEVEL_FIELDS = (
    "model_path", "audio_chunking", "stream_delivery", "stages", "name", "entry_stage", "processes",
    "env_defaults", "mps", "weight_share", "placement", "placement_policy", "endpoints", "terminal_stages_fn",
    "config_cls", "session_nodes", "session_publish", "max_output_lead_ms", "services",
)
_BASE_LANGUAGES = frozenset(
    {
        "Auto",
        "Chinese",
        "English",
        "Japanese",
        "Korean",
        "German",
        "French",
        "Russian",
        "Portuguese",
        "Spanish",
        "Italian",
    }
)

FAMILIES: dict[str, Family] = {
    family.package: family
    for family in (
        Family(
            package="qwen3_tts",
            config_cls="Qwen3TTSPipelineConfig",
            architecture="Qwen3TTSForConditionalGeneration",
            stages=("preprocessing", "tts_engine", "vocoder"),
            engine_stage="tts_engine",
            sample_rate_hz=24000,
            tokens_per_s=12.5,
            default_max_new_tokens=2048,
        ),
        Family(
            package="higgs_tts",
            config_cls="HiggsTtsPipelineConfig",
            architecture="HiggsMultimodalQwen3ForConditionalGeneration",
            stages=("preprocessing", "audio_encoder", "tts_engine", "vocoder"),
            engine_stage="tts_engine",
            stage_fractions=(("audio_encoder", 0.03), ("tts_engine", 0.85), ("vocoder", 0.10)),
            sample_rate_hz=24000,
            tokens_per_s=75.0,
            default_max_new_tokens=2048,
            factory_max_new_tokens=2048,
            default_kv_capacity=4095,
            processes=3,
            supports_uploaded_voices=True,
            requires_uploaded_voice_for_named_voice=True,
            max_reference_s=100.0,
        ),
        Family(
            package="moss_tts",
            config_cls="MossTTSPipelineConfig",
            architecture="MossTTSDelayModel",
            stages=("preprocessing", "tts_engine", "vocoder"),
            engine_stage="tts_engine",
            stage_fractions=(("preprocessing", 0.10), ("tts_engine", 0.72), ("vocoder", 0.18)),
            sample_rate_hz=24000,
            tokens_per_s=12.5,
            default_max_new_tokens=4096,
            max_input_chars=None,
            variants=("single_process",),
            variant_classes=("MossTTSSingleProcessPipelineConfig",),
            default_mem_fraction=0.72,
            processes=2,
            supports_uploaded_voices=True,
        ),
        Family(
            package="moss_tts_local",
            config_cls="MossTTSLocalPipelineConfig",
            architecture="MossTTSLocalModel",
            stages=("preprocessing", "tts_engine", "vocoder"),
            engine_stage="tts_engine",
            stage_fractions=(("preprocessing", 0.15), ("tts_engine", 0.67), ("vocoder", 0.18)),
            sample_rate_hz=48000,
            channels=2,
            tokens_per_s=12.5,
            default_max_new_tokens=4096,
            max_input_chars=None,
            extra_languages=_MOSS_LOCAL_LANGUAGES,
            variants=("colocated", "split"),
            variant_classes=("MossTTSLocalColocatedPipelineConfig", "MossTTSLocalSplitPipelineConfig"),
            default_mem_fraction=0.67,
            max_mem_fraction=0.67,
            processes=3,
            supports_uploaded_voices=True,
        ),
        Family(
            package="voxtral_tts",
            config_cls="VoxtralTTSPipelineConfig",
            architecture="VoxtralTTSForConditionalGeneration",
            stages=("preprocessing", "tts_generation", "vocoder"),
            engine_stage="tts_generation",
            sample_rate_hz=24000,
            tokens_per_s=12.5,
            default_max_new_tokens=4096,
            factory_max_new_tokens=4096,
        ),
        Family(
            package="dots_tts",
            config_cls="DotsTTSPipelineConfig",
            architecture="DotsTTSForConditionalGeneration",
            stages=("preprocessing", "reference_encode", "latent_engine", "vocoder"),
            engine_stage="latent_engine",
            sample_rate_hz=48000,
            tokens_per_s=12.5,
            default_max_new_tokens=500,
            extra_languages=frozenset({"auto_detect"}),
            default_mem_fraction=0.20,
            supports_uploaded_voices=True,
            reference_required_count=1,
            reference_text_required=True,
            request_max_new_tokens_limit=500,
        ),
        Family(
            package="fishaudio_s2_pro",
            config_cls="S2ProPipelineConfig",
            architecture="FishQwen3OmniForCausalLM",
            stages=("preprocessing", "tts_engine", "vocoder"),
            engine_stage="tts_engine",
            sample_rate_hz=44100,
            tokens_per_s=21.5,
            default_max_new_tokens=1024,
            factory_max_new_tokens=2048,
            processes=2,
            supports_uploaded_voices=True,
        ),
        Family(
            package="zonos2",
            config_cls="Zonos2PipelineConfig",
            architecture="Zonos2ForCausalLM",
            stages=("preprocessing", "speaker_encode", "tts_engine", "vocoder"),
            engine_stage="tts_engine",
            sample_rate_hz=44100,
            tokens_per_s=86.13,
            default_max_new_tokens=1024,
            variants=("multi_gpu",),
            variant_classes=("Zonos2MultiGPUPipelineConfig",),
            default_mem_fraction=0.5,
        ),
    )
}

_ARCHITECTURE_ALIASES = {
    "qwen3_tts": "qwen3_tts",
    "higgs_multimodal_qwen3": "higgs_tts",
    "MossTTSDelay": "moss_tts",
    "MossTTSDelayForConditionalGeneration": "moss_tts",
    "MossTTSLocal": "moss_tts_local",
    "MossTTSLocalForConditionalGeneration": "moss_tts_local",
    "voxtral_tts": "voxtral_tts",
    "dots_tts": "dots_tts",
    "DotsTtsModel": "dots_tts",
    "fish_qwen3_omni": "fishaudio_s2_pro",
    "Zonos2": "zonos2",
    "Zonos2Model": "zonos2",
    "ZONOS2": "zonos2",
    "zonos2": "zonos2",
}


@dataclass(frozen=True, slots=True)
class ResolvedModel:
    """What the fake knows about the checkpoint behind a model path."""

    model_path: str
    family: Family
    repo_id: str | None = None
    # Qwen3-TTS checkpoint kind: "base", "custom_voice" or "voice_design"; "" for other families.
    qwen_kind: str = ""
    speakers: tuple[str, ...] = ()
    presets: tuple[str, ...] = ()

    @property
    def custom_voice(self) -> bool:
        """True for a Qwen3-TTS CustomVoice checkpoint (server-side speaker checks apply)."""
        return self.qwen_kind == "custom_voice"


def family_for_config_cls(name: str) -> Family | None:
    """The family whose config class (or a variant class) is ``name``."""
    for family in FAMILIES.values():
        if name == family.config_cls or name in family.variant_classes:
            return family
    return None


def _qwen_kind_from_name(name: str) -> str:
    lowered = name.replace("-", "").replace("_", "").lower()
    if "customvoice" in lowered:
        return "custom_voice"
    if "voicedesign" in lowered:
        return "voice_design"
    return "base"


def _read_local_config(path: Path) -> dict[str, object]:
    try:
        data = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _family_from_architecture(config: dict[str, object]) -> Family | None:
    names: list[str] = []
    architectures = config.get("architectures")
    if isinstance(architectures, list):
        names.extend(str(item) for item in architectures[:1])
    for key in ("architecture", "model_type"):
        if isinstance(config.get(key), str):
            names.append(str(config[key]))
    for name in names:
        for family in FAMILIES.values():
            if name == family.architecture:
                return family
        if name in _ARCHITECTURE_ALIASES:
            return FAMILIES[_ARCHITECTURE_ALIASES[name]]
    return None


def _repo_from_cache_path(path: Path) -> str | None:
    """``.../models--Org--Name/snapshots/<sha>`` (a Hugging Face cache snapshot) names its repo."""
    for part in path.parts:
        match = re.fullmatch(r"models--([^/]+?)--(.+)", part)
        if match:
            return f"{match.group(1)}/{match.group(2)}"
    return None


def _resolved(
    model_path: str, family: Family, repo_id: str | None, config: dict[str, object]
) -> ResolvedModel:
    qwen_kind = ""
    speakers: tuple[str, ...] = ()
    if family.package == "qwen3_tts":
        raw_kind = config.get("tts_model_type")
        if isinstance(raw_kind, str) and raw_kind.strip():
            qwen_kind = _qwen_kind_from_name(raw_kind)
        else:
            qwen_kind = _qwen_kind_from_name(repo_id or model_path)
        if qwen_kind == "custom_voice":
            talker = config.get("talker_config")
            spk_id = talker.get("spk_id") if isinstance(talker, dict) else None
            speakers = tuple(spk_id) if isinstance(spk_id, dict) and spk_id else QWEN_CARD_SPEAKERS
    presets = VOXTRAL_CARD_PRESETS if family.package == "voxtral_tts" else ()
    return ResolvedModel(model_path, family, repo_id, qwen_kind, speakers, presets)


def resolve_model_path(model_path: str, *, family: Family | None = None) -> ResolvedModel | None:
    """Resolve ``model_path`` to a model, or None when the fake cannot tell its architecture.

    Args:
        model_path: a Hub repo id (``org/name`` or ``org/name@rev``) or a local directory.
        family: the family a config file's ``config_cls`` already fixed, if any.
    """
    local = Path(model_path).expanduser()
    config: dict[str, object] = {}
    repo_id: str | None = None
    if local.is_dir():
        config = _read_local_config(local)
        fake_repo = config.get("omni_web_fake_repo")
        repo_id = str(fake_repo) if isinstance(fake_repo, str) else _repo_from_cache_path(local.resolve())
    else:
        repo_id = model_path
    entry = entry_for_repo(repo_id) if repo_id else None
    if family is None:
        if entry is not None:
            family = FAMILIES.get(entry.family)
        if family is None and config:
            family = _family_from_architecture(config)
    if family is None:
        return None
    return _resolved(model_path, family, entry.repo_id if entry else repo_id, config)


def is_qwen3_tts_base_model(model_path: str) -> bool:
    """The server's path heuristic deciding whether a Qwen3-TTS Base model uses uploaded voices."""
    parts = [
        part.replace("-", "_").casefold()
        for part in re.split(r"[/\\]+", model_path.strip())
        if "qwen3_tts" in part.replace("-", "_").casefold()
    ]
    if any(
        marker in part
        for part in parts
        for marker in ("custom_voice", "customvoice", "voice_design", "voicedesign")
    ):
        return False
    return any(part.endswith("base") or "_base_" in part for part in parts)
