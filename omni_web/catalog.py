"""The model catalog: one entry per installable model, as data.

Everything model-specific in the app reads this table; no ``if model == "higgs"`` elsewhere.
Facts come from each model's card and sglang-omni 0.1.9's own code (sglang_omni/models/<model>/ and
the vendored configs in configs/); where sources disagree, the entry's ``source_note`` says which
was chosen and why.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from omni_web.errors import UnknownModel

__all__ = [
    "model_label",
    "CATALOG",
    "SGLANG_OMNI_PYTHON_MAX_EXCLUSIVE",
    "SGLANG_OMNI_PYTHON_MIN",
    "SGLANG_OMNI_VERSION",
    "CAPABILITY_COLUMNS",
    "CatalogEntry",
    "DeliveryControl",
    "VoiceMode",
    "entry_for_repo",
    "get_entry",
    "keys",
]

# The one place the backend pin lives. 0.1.9's METADATA says Requires-Python: <3.13,>=3.11.
SGLANG_OMNI_VERSION = "0.1.9"
SGLANG_OMNI_PYTHON_MIN = (3, 11)
SGLANG_OMNI_PYTHON_MAX_EXCLUSIVE = (3, 13)

# Capability words in the order the model picker renders them as columns.
CAPABILITY_COLUMNS = ("tts", "clone", "design")

# The server's default `input` limit (MAX_SPEECH_INPUT_CHARS in sglang_omni/config/schema.py).
DEFAULT_MAX_INPUT_CHARS = 4096


class VoiceMode(enum.StrEnum):
    """How a model chooses the voice it speaks with."""

    BUILTIN_SPEAKERS = "builtin_speakers"  # checkpoint speakers, listed by GET /v1/audio/voices
    PRESET_VOICES = "preset_voices"  # named presets the server does not list (Voxtral)
    CLONE_REQUIRED = "clone_required"  # a reference clip is mandatory
    DEFAULT_OR_CLONE = "default_or_clone"  # narrates with a default voice, or clones a clip
    INSTRUCTIONS = "instructions"  # voice design from a text description


class DeliveryControl(enum.StrEnum):
    """How a model is told how to say a line (whispered, shouted, …); NONE: it cannot be."""

    NONE = "none"
    INSTRUCTIONS = "instructions"  # the request's `instructions` field (Qwen3-TTS CustomVoice, VoiceDesign)
    HIGGS_TOKENS = "higgs_tokens"  # <|emotion:…|> / <|style:…|> leading the input (Higgs Audio v3 cookbook)
    BRACKET_TAGS = "bracket_tags"  # [whispering]-style cue before the text (Fish S2-Pro)


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One installable model and everything the app must know to serve and call it."""

    key: str
    label: str
    repo_id: str
    org: str
    family: str  # sglang_omni/models/<family>
    config_cls: str
    capabilities: tuple[str, ...]
    voice_mode: VoiceMode
    sample_rate_hz: int
    channels: int = 1
    # Requests carry this max_new_tokens when set (Higgs 3000, ZONOS2 12288).
    request_max_new_tokens: int | None = None
    # The most tokens a request may ask for (the server's cap for the family): the ceiling of the
    # budget QA sizes to each chunk's text (omni_web/qa/budget.py). None: no budget is sent.
    max_new_tokens_limit: int | None = None
    # Words per request the model can voice before its window cuts audio off (Higgs 80).
    max_words_per_request: int | None = None
    # Server-side `input` limit; None where the family has none (MOSS).
    max_input_chars: int | None = DEFAULT_MAX_INPUT_CHARS
    # Vendored config under configs/; None means upstream defaults (ZONOS2 on CC >= 8.9).
    config_file: str | None = None
    # Config used instead of `config_file` on GPUs below `fallback_below_cc`.
    fallback_config_file: str | None = None
    fallback_below_cc: tuple[int, int] | None = None
    fallback_tag: str = ""
    # Throughput profile (configs/): wider batches, CUDA graphs to match, stage placement for speed;
    # used instead of `config_file` on a GPU with at least `throughput_min_vram_gb` of memory.
    throughput_config_file: str | None = None
    throughput_min_vram_gb: float = 0.0
    companion_packages: tuple[str, ...] = ()  # pip-installed --no-deps into the backend venv
    system_binaries: tuple[str, ...] = ()
    vram_note: str = ""
    min_vram_gb: float = 0.0
    approx_download_gb: float = 0.0
    default_concurrency: int = 8
    default_voice: str = "default"
    preset_voices: tuple[str, ...] = ()  # for models whose presets the server does not list
    supports_uploaded_voices: bool = False
    requires_ref_text: bool = False  # dots.tts refuses a clone without a transcript
    accepts_seed: bool = True  # ZONOS2 refuses `seed` (HTTP 500)
    accepts_sampling_fields: bool = True  # Voxtral refuses everything but voice/max_new_tokens
    # The model spells out numbers itself (ZONOS2 runs NeMo text normalisation on `language`), so
    # omni-web's normalisation is off for it unless the user's setting turns it on.
    normalizes_text: bool = False
    # How a line's delivery label reaches the model (omni_web.delivery_cues); NONE drops the label.
    delivery_control: DeliveryControl = DeliveryControl.NONE
    # Built-in speakers or presets as (name, gender, age) for casting by persona: gender "female" or
    # "male", age "young", "adult" or "old" (from the model cards' speaker descriptions).
    speaker_traits: tuple[tuple[str, str, str], ...] = ()
    source_note: str = ""

    @property
    def needs_reference(self) -> bool:
        """True when every request must carry a reference clip."""
        return self.voice_mode is VoiceMode.CLONE_REQUIRED

    @property
    def can_clone(self) -> bool:
        """True when the model accepts a reference clip."""
        return "clone" in self.capabilities

    def capability_columns(self) -> tuple[str, ...]:
        """Each of CAPABILITY_COLUMNS, or "" where the model lacks it (for aligned pickers)."""
        return tuple(word if word in self.capabilities else "" for word in CAPABILITY_COLUMNS)


_QWEN_COMPANIONS = ("sox", "einops", "qwen-tts==0.1.1")
_DAC_COMPANIONS = ("descript-audiotools==0.7.2", "descript-audio-codec==1.0.0")
# Qwen3-TTS CustomVoice speakers from the model card; the server's list is authoritative.
_QWEN_CUSTOMVOICE_SPEAKERS = (
    "Vivian",
    "Serena",
    "Uncle_Fu",
    "Dylan",
    "Eric",
    "Ryan",
    "Aiden",
    "Ono_Anna",
    "Sohee",
)
# Voxtral presets named on its card; GET /v1/audio/voices does not list them
# (sglang_omni/serve/openai_api.py).
# Qwen3-TTS CustomVoice speakers as its card describes them (gender, age).
_QWEN_SPEAKER_TRAITS = (
    ("Vivian", "female", "young"),
    ("Serena", "female", "adult"),
    ("Uncle_Fu", "male", "old"),
    ("Dylan", "male", "young"),
    ("Eric", "male", "adult"),
    ("Ryan", "male", "adult"),
    ("Aiden", "male", "young"),
    ("Ono_Anna", "female", "young"),
    ("Sohee", "female", "adult"),
)
_VOXTRAL_PRESETS = (
    "cheerful_female",
    "casual_female",
    "casual_male",
    "neutral_female",
    "neutral_male",
)

CATALOG: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        key="qwen3_tts_0_6b_customvoice",
        max_new_tokens_limit=2048,
        label="Qwen3-TTS 0.6B CustomVoice",
        repo_id="Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice",
        org="Qwen",
        family="qwen3_tts",
        config_cls="Qwen3TTSPipelineConfig",
        capabilities=("tts",),
        voice_mode=VoiceMode.BUILTIN_SPEAKERS,
        sample_rate_hz=24000,
        config_file="qwen3_tts.yaml",
        throughput_config_file="qwen3_tts_throughput.yaml",
        throughput_min_vram_gb=40,
        companion_packages=_QWEN_COMPANIONS,
        system_binaries=("sox",),
        vram_note="Lightest model; runs on an 8 GB card.",
        min_vram_gb=8,
        approx_download_gb=2.5,
        default_concurrency=16,
        default_voice="Vivian",
        preset_voices=_QWEN_CUSTOMVOICE_SPEAKERS,
        delivery_control=DeliveryControl.INSTRUCTIONS,
        speaker_traits=_QWEN_SPEAKER_TRAITS,
    ),
    CatalogEntry(
        key="qwen3_tts_0_6b_base",
        max_new_tokens_limit=2048,
        label="Qwen3-TTS 0.6B Base",
        repo_id="Qwen/Qwen3-TTS-12Hz-0.6B-Base",
        org="Qwen",
        family="qwen3_tts",
        config_cls="Qwen3TTSPipelineConfig",
        capabilities=("clone",),
        voice_mode=VoiceMode.CLONE_REQUIRED,
        sample_rate_hz=24000,
        config_file="qwen3_tts.yaml",
        throughput_config_file="qwen3_tts_throughput.yaml",
        throughput_min_vram_gb=40,
        companion_packages=_QWEN_COMPANIONS,
        system_binaries=("sox",),
        vram_note="Runs on an 8 GB card.",
        min_vram_gb=8,
        approx_download_gb=2.5,
        default_concurrency=16,
        supports_uploaded_voices=True,
    ),
    CatalogEntry(
        key="qwen3_tts_1_7b_base",
        max_new_tokens_limit=2048,
        label="Qwen3-TTS 1.7B Base",
        repo_id="Qwen/Qwen3-TTS-12Hz-1.7B-Base",
        org="Qwen",
        family="qwen3_tts",
        config_cls="Qwen3TTSPipelineConfig",
        capabilities=("clone",),
        voice_mode=VoiceMode.CLONE_REQUIRED,
        sample_rate_hz=24000,
        config_file="qwen3_tts.yaml",
        throughput_config_file="qwen3_tts_throughput.yaml",
        throughput_min_vram_gb=40,
        companion_packages=_QWEN_COMPANIONS,
        system_binaries=("sox",),
        vram_note="Higher quality than 0.6B; about 12 GB of VRAM.",
        min_vram_gb=12,
        approx_download_gb=4.5,
        default_concurrency=16,
        supports_uploaded_voices=True,
    ),
    CatalogEntry(
        key="qwen3_tts_1_7b_voicedesign",
        max_new_tokens_limit=2048,
        label="Qwen3-TTS 1.7B VoiceDesign",
        repo_id="Qwen/Qwen3-TTS-12Hz-1.7B-VoiceDesign",
        org="Qwen",
        family="qwen3_tts",
        config_cls="Qwen3TTSPipelineConfig",
        capabilities=("design",),
        voice_mode=VoiceMode.INSTRUCTIONS,
        sample_rate_hz=24000,
        config_file="qwen3_tts.yaml",
        throughput_config_file="qwen3_tts_throughput.yaml",
        throughput_min_vram_gb=40,
        companion_packages=_QWEN_COMPANIONS,
        system_binaries=("sox",),
        vram_note="About 12 GB of VRAM.",
        min_vram_gb=12,
        approx_download_gb=4.5,
        default_concurrency=16,
        delivery_control=DeliveryControl.INSTRUCTIONS,
    ),
    CatalogEntry(
        key="higgs_audio_v3_tts",
        max_new_tokens_limit=3000,
        label="Higgs Audio v3 TTS",
        repo_id="bosonai/higgs-audio-v3-tts-4b",
        org="Boson AI",
        family="higgs_tts",
        config_cls="HiggsTtsPipelineConfig",
        capabilities=("tts", "clone"),
        voice_mode=VoiceMode.DEFAULT_OR_CLONE,
        sample_rate_hz=24000,
        # The thinker context is pinned at 4096 tokens: prompt + 3000 new tokens (~40 s) fit.
        request_max_new_tokens=3000,
        max_words_per_request=80,
        config_file="higgs_audio_v3_tts.yaml",
        vram_note="Vendored config leaves headroom on 24 GB cards; about 16 GB is the floor.",
        min_vram_gb=16,
        approx_download_gb=9,
        default_concurrency=8,
        supports_uploaded_voices=True,
        delivery_control=DeliveryControl.HIGGS_TOKENS,
        source_note=(
            "Boson's README names bosonai/higgs-audio-v3-tts-4b; sglang-omni's docs index also "
            "lists boson-sglang/higgs-audio-v3-tts-4b-base. We use the README's id."
        ),
    ),
    CatalogEntry(
        key="moss_tts",
        max_new_tokens_limit=4096,
        label="MOSS-TTS v1.5",
        repo_id="OpenMOSS-Team/MOSS-TTS-v1.5",
        org="OpenMOSS",
        family="moss_tts",
        config_cls="MossTTSPipelineConfig",
        capabilities=("clone",),
        voice_mode=VoiceMode.CLONE_REQUIRED,
        sample_rate_hz=24000,
        max_input_chars=None,
        config_file="moss_tts.yaml",
        vram_note="About 17 GB of bf16 weights: needs a 24 GB card (runs mem_fraction_static 0.87).",
        min_vram_gb=24,
        approx_download_gb=18,
        default_concurrency=8,
        supports_uploaded_voices=True,
    ),
    CatalogEntry(
        key="moss_tts_local",
        max_new_tokens_limit=4096,
        label="MOSS-TTS Local v1.5",
        repo_id="OpenMOSS-Team/MOSS-TTS-Local-Transformer-v1.5",
        org="OpenMOSS",
        family="moss_tts_local",
        config_cls="MossTTSLocalPipelineConfig",
        capabilities=("tts", "clone"),
        voice_mode=VoiceMode.DEFAULT_OR_CLONE,
        sample_rate_hz=48000,
        channels=2,
        max_input_chars=None,
        config_file="moss_tts_local.yaml",
        vram_note="48 kHz stereo; upstream defaults already budget its colocated stages.",
        min_vram_gb=16,
        approx_download_gb=8,
        default_concurrency=8,
        supports_uploaded_voices=True,
    ),
    CatalogEntry(
        key="voxtral_tts",
        max_new_tokens_limit=4096,
        label="Voxtral TTS 4B",
        repo_id="mistralai/Voxtral-4B-TTS-2603",
        org="Mistral AI",
        family="voxtral_tts",
        config_cls="VoxtralTTSPipelineConfig",
        capabilities=("tts",),
        voice_mode=VoiceMode.PRESET_VOICES,
        sample_rate_hz=24000,
        config_file="voxtral_tts.yaml",
        vram_note="About 12 GB of VRAM.",
        min_vram_gb=12,
        approx_download_gb=8,
        default_concurrency=8,
        default_voice="cheerful_female",
        preset_voices=_VOXTRAL_PRESETS,
        speaker_traits=(
            ("cheerful_female", "female", "young"),
            ("casual_female", "female", "adult"),
            ("casual_male", "male", "adult"),
            ("neutral_female", "female", "adult"),
            ("neutral_male", "male", "adult"),
        ),
        accepts_seed=False,
        accepts_sampling_fields=False,
        source_note="Voices named on the model card, e.g. `default`, `casual_male`; `default` maps to "
        "cheerful_female.",
    ),
    CatalogEntry(
        key="dots_tts_mf",
        max_new_tokens_limit=500,
        label="dots.tts (MeanFlow)",
        repo_id="rednote-hilab/dots.tts-mf",
        org="rednote-hilab",
        family="dots_tts",
        config_cls="DotsTTSPipelineConfig",
        capabilities=("clone",),
        voice_mode=VoiceMode.CLONE_REQUIRED,
        sample_rate_hz=48000,
        config_file="dots_tts.yaml",
        companion_packages=("einops",),
        vram_note="Small engine budget (mem_fraction_static 0.20 upstream).",
        min_vram_gb=12,
        approx_download_gb=6,
        default_concurrency=8,
        supports_uploaded_voices=True,
        requires_ref_text=True,
        source_note=(
            "dots.tts imports `einops` (sglang_omni/models/dots_tts/), which sglang-omni's "
            "own requirements do not list, so it is installed as a companion."
        ),
    ),
    CatalogEntry(
        key="fish_s2_pro",
        max_new_tokens_limit=2048,
        label="Fish Speech S2-Pro",
        repo_id="fishaudio/s2-pro",
        org="Fish Audio",
        family="fishaudio_s2_pro",
        config_cls="S2ProPipelineConfig",
        capabilities=("tts", "clone"),
        voice_mode=VoiceMode.DEFAULT_OR_CLONE,
        sample_rate_hz=44100,
        config_file="fish_s2_pro.yaml",
        throughput_config_file="fish_s2_pro_throughput.yaml",
        throughput_min_vram_gb=48,
        companion_packages=_DAC_COMPANIONS,
        system_binaries=("ffmpeg",),
        vram_note="Needs about 24 GB of VRAM (known OOM on a single RTX 3090, upstream issue #359).",
        min_vram_gb=24,
        approx_download_gb=11,
        default_concurrency=16,
        supports_uploaded_voices=True,
        delivery_control=DeliveryControl.BRACKET_TAGS,
    ),
    CatalogEntry(
        key="zonos2",
        max_new_tokens_limit=12288,
        label="ZONOS2",
        repo_id="Zyphra/ZONOS2",
        org="Zyphra",
        family="zonos2",
        config_cls="Zonos2PipelineConfig",
        capabilities=("clone",),
        voice_mode=VoiceMode.CLONE_REQUIRED,
        sample_rate_hz=44100,
        # The engine's 1024-frame default caps one request at ~12 s of speech.
        request_max_new_tokens=12288,
        config_file=None,
        fallback_config_file="zonos2_bf16.yaml",
        fallback_below_cc=(8, 9),
        fallback_tag="bf16 fallback",
        companion_packages=_DAC_COMPANIONS,
        system_binaries=("ffmpeg",),
        vram_note=(
            "FP8 MoE needs compute capability 8.9+; older GPUs run the bf16 config at about twice "
            "the MoE VRAM. About 16 GB is the practical floor."
        ),
        min_vram_gb=16,
        approx_download_gb=12,
        default_concurrency=8,
        accepts_seed=False,
        normalizes_text=True,
        source_note="Repo id from the ZONOS2 tech report.",
    ),
)

_BY_KEY = {entry.key: entry for entry in CATALOG}


def keys() -> list[str]:
    """Catalog keys in catalog order."""
    return [entry.key for entry in CATALOG]


def get_entry(key: str) -> CatalogEntry:
    """Return the entry for ``key``; raise :class:`UnknownModel` listing the valid keys."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise UnknownModel(key, keys()) from None


def model_label(key: str, tag: str = "") -> str:
    """The model as users read it, with a serving tag: ``"ZONOS2 (bf16 fallback)"``; a key that is
    not in the catalog (a foreign server's id) as it is."""
    entry = _BY_KEY.get(key)
    name = entry.label if entry is not None else key
    return f"{name} ({tag})" if tag else name


def entry_for_repo(repo_id: str) -> CatalogEntry | None:
    """The entry whose repo id matches (case-insensitive, ``@revision`` ignored), if any.

    A Hugging Face cache snapshot path (``…/models--Qwen--Name/snapshots/<sha>``), which a server
    started with ``--model-path`` on that folder reports as its model id, names its repo too.
    """
    wanted = repo_id.split("@", 1)[0].strip().lower()
    cached = re.search(r"(?:^|/)models--([^/]+?)--([^/]+)", wanted)
    if cached:
        wanted = f"{cached.group(1)}/{cached.group(2)}"
    for entry in CATALOG:
        if entry.repo_id.lower() == wanted:
            return entry
    return None
