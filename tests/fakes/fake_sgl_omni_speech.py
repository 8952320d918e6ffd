"""``POST /v1/audio/speech`` for the fake ``sgl-omni``: validation in the real order, then a plan.

:func:`prepare_speech` mirrors the API process (``speech_service.py``): body shape, raw type
checks, the pydantic step, semantic checks, references, then the per-class reference rules.
:func:`plan_generation` mirrors what the pipeline does afterwards: per-family model checks (some
answer 500, as the real stage errors do), ``max_new_tokens`` capping, the scheduler's KV-capacity
check, and how much audio comes out.

Token model (documented so tests can compute exact numbers)::

    input_tokens = 4 * words(input) + 4 * words(ref texts) + 4 * words(instructions, where used)
                   + round(25 * total reference seconds)
    audio_s      = words(input) * seconds_per_word   (MOSS: token_count / 12.5 when given)
    needed       = ceil(audio_s * family.tokens_per_s); cut to max_new_tokens -> finish "length"
"""

from __future__ import annotations

import math
import re
import shutil
from dataclasses import dataclass, field

from tests.fakes.fake_sgl_omni_errors import bad_request, internal_error, service_unavailable
from tests.fakes.fake_sgl_omni_media import (
    LoadedReference,
    MediaPolicy,
    load_base64_reference,
    load_reference,
)
from tests.fakes.fake_sgl_omni_models import ResolvedModel, is_qwen3_tts_base_model
from tests.fakes.fake_sgl_omni_voices import VoiceStore

__all__ = [
    "GenerationPlan",
    "PreparedSpeech",
    "SpeechContext",
    "kv_capacity_message",
    "plan_generation",
    "prepare_speech",
]

_FORMATS = ("aac", "flac", "mp3", "opus", "pcm", "wav")
_TASK_TYPES = {"base": "Base", "customvoice": "CustomVoice", "voicedesign": "VoiceDesign"}
_STRING_FIELDS = (
    "model",
    "input",
    "voice",
    "speaker",
    "response_format",
    "task_type",
    "language",
    "instructions",
    "ref_audio",
    "ref_text",
)
_INT_FIELDS = ("max_new_tokens", "initial_codec_chunk_frames", "token_count", "duration_tokens", "seed")
_NUMBER_FIELDS = ("speed", "temperature", "top_p", "repetition_penalty")
_BOOL_FIELDS = ("stream", "x_vector_only_mode", "stream_codec_output", "suppress_bootstrap_silence")
_TOKENS_PER_WORD = 4
_TOKENS_PER_REFERENCE_S = 25


@dataclass(frozen=True, slots=True)
class SpeechContext:
    """Everything about the running server that a speech request is checked against."""

    model: ResolvedModel
    media: MediaPolicy
    voices: VoiceStore
    factory_max_new_tokens: int | None
    kv_capacity: int | None
    seconds_per_word: float

    @property
    def supports_uploaded(self) -> bool:
        """``supports_uploaded_voice_references()`` of the pipeline class."""
        if self.model.custom_voice:
            return False
        if self.model.family.package == "qwen3_tts":
            return is_qwen3_tts_base_model(self.model.model_path)
        return self.model.family.supports_uploaded_voices

    @property
    def requires_uploaded(self) -> bool:
        """``requires_uploaded_voice_for_named_voice()``: Higgs always, Qwen3 Base by path."""
        if self.model.custom_voice:
            return False
        if self.model.family.package == "qwen3_tts":
            return is_qwen3_tts_base_model(self.model.model_path)
        return self.model.family.requires_uploaded_voice_for_named_voice


@dataclass(frozen=True, slots=True)
class PreparedSpeech:
    """A request that passed the API process's checks."""

    payload: dict[str, object]
    input: str
    voice: str
    response_format: str
    speed: float
    stream: bool
    stream_format: str
    task_type: str | None
    task_type_explicit: bool
    references: tuple[LoadedReference, ...] = ()
    uploaded_voice: str | None = None
    has_ref_audio_field: bool = False
    extra: dict[str, object] = field(default_factory=dict)

    def get(self, name: str) -> object:
        """A raw payload field (None when absent)."""
        return self.payload.get(name)


@dataclass(frozen=True, slots=True)
class GenerationPlan:
    """How the fake answers an accepted request."""

    duration_s: float
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    voice_key: str
    max_new_tokens: int = 0  # the request's budget after capping (what a runaway generates)
    tokens_per_s: float = 12.5  # the family's codec frame rate


def _raw_type_checks(payload: dict[str, object]) -> None:
    def present(name: str) -> bool:
        return payload.get(name) is not None

    for name in _STRING_FIELDS:
        if present(name) and not isinstance(payload[name], str):
            raise bad_request(f"{name} must be a string", param=name)
    for name in (*_INT_FIELDS, "top_k"):
        value = payload.get(name)
        if present(name) and (isinstance(value, bool) or not isinstance(value, int)):
            raise bad_request(f"{name} must be an integer", param=name)
    for name in _NUMBER_FIELDS:
        value = payload.get(name)
        if present(name) and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise bad_request(f"{name} must be a number", param=name)
    for name in _BOOL_FIELDS:
        if present(name) and not isinstance(payload[name], bool):
            raise bad_request(f"{name} must be a boolean", param=name)


def _schema_checks(payload: dict[str, object]) -> None:
    """The pydantic step: ``<loc>: <msg>`` for the first error, as ``validation_error_message``."""
    if "input" not in payload:
        raise bad_request("input: Field required")
    if payload["input"] is None:
        raise bad_request("input: Input should be a valid string")
    if payload.get("stream_format", "audio") not in ("audio", "sse"):
        raise bad_request("stream_format: Input should be 'audio' or 'sse'")
    references = payload.get("references")
    if references is not None:
        if not isinstance(references, list):
            raise bad_request("references: Input should be a valid list")
        for index, item in enumerate(references):
            if not isinstance(item, dict):
                raise bad_request(
                    f"references.{index}: Input should be a valid dictionary or instance of SpeechReference"
                )
    if payload.get("stage_params") is not None and not isinstance(payload["stage_params"], dict):
        raise bad_request("stage_params: Input should be a valid dictionary")
    frames = payload.get("initial_codec_chunk_frames")
    if isinstance(frames, int) and frames < 0:
        raise bad_request("initial_codec_chunk_frames: Input should be greater than or equal to 0")


def _normalize_task_type(value: str) -> str:
    normalized = _TASK_TYPES.get(value.strip().replace("_", "").replace("-", "").lower())
    if normalized is None:
        raise bad_request("task_type must be one of: Base, CustomVoice, VoiceDesign", param="task_type")
    return normalized


def _encoder_check(fmt: str) -> None:
    if fmt in ("wav", "pcm") or shutil.which("ffmpeg"):
        return
    if fmt == "flac":
        raise service_unavailable("soundfile is required for response_format='flac'", param="response_format")
    raise service_unavailable(
        f"PyAV or pydub is required for response_format='{fmt}'", param="response_format"
    )


def _custom_voice_checks(
    payload: dict[str, object], ctx: SpeechContext, task_type: str | None, voice: str
) -> None:
    if not ctx.model.custom_voice:
        return
    if task_type is not None and task_type != "CustomVoice":
        raise bad_request("task_type must be one of: CustomVoice", param="task_type")
    for name in ("ref_audio", "ref_text", "x_vector_only_mode"):
        if payload.get(name) is not None:
            raise bad_request(f"{name} is not supported by this model", param=name)
    if payload.get("references"):
        raise bad_request("references are not supported by this model", param="references")
    # note: the real server compares speakers case-insensitively (casefold); the fake is strict on
    # purpose so a client that alters the listed spelling is caught here.
    if voice.strip() in ("", "default") or voice.strip() in ctx.model.speakers:
        return
    supported = ", ".join(("default", *ctx.model.speakers))
    raise bad_request(f"Unknown voice '{voice}'. Supported voices: {supported}", param="voice")


def _semantic_checks(payload: dict[str, object], ctx: SpeechContext) -> tuple[str, bool, float, str | None]:
    text = str(payload["input"])
    if not text.strip():
        raise bad_request("input must be a non-empty string", param="input")
    limit = ctx.model.family.max_input_chars
    if limit is not None and len(text) > limit:
        raise bad_request(f"input must be at most {limit} characters", param="input")
    fmt = str(payload.get("response_format") or "wav").strip().lower()
    if fmt not in _FORMATS:
        raise bad_request(f"response_format must be one of: {', '.join(_FORMATS)}", param="response_format")
    stream = bool(payload.get("stream")) or payload.get("stream_format") == "sse"
    if stream and fmt != "pcm":
        raise bad_request("stream=true requires response_format='pcm'", param="response_format")
    if not stream:
        _encoder_check(fmt)
    speed = float(payload["speed"]) if payload.get("speed") is not None else 1.0  # type: ignore[arg-type]
    if not 0.25 <= speed <= 4.0:
        raise bad_request("speed must be between 0.25 and 4.0", param="speed")
    task_type = (
        _normalize_task_type(str(payload["task_type"])) if payload.get("task_type") is not None else None
    )
    _custom_voice_checks(payload, ctx, task_type, _voice(payload))
    if payload.get("language") is not None:
        languages = {name.lower(): name for name in ctx.model.family.languages}
        if str(payload["language"]).strip().lower() not in languages:
            supported = ", ".join(sorted(languages.values()))
            raise bad_request(f"language must be one of: {supported}", param="language")
    for name in ("max_new_tokens", "token_count", "duration_tokens"):
        value = payload.get(name)
        if isinstance(value, int) and value <= 0:
            raise bad_request(f"{name} must be greater than 0", param=name)
    for name in ("initial_codec_chunk_frames", "seed"):
        value = payload.get(name)
        if isinstance(value, int) and value < 0:
            raise bad_request(f"{name} must be greater than or equal to 0", param=name)
    return fmt, stream, speed, task_type


def _voice(payload: dict[str, object]) -> str:
    for name in ("voice", "speaker"):
        if name in payload and payload[name] is not None:
            return str(payload[name])
    return "default"


def _uploaded_reference(payload: dict[str, object], ctx: SpeechContext) -> tuple[str, LoadedReference] | None:
    voice = _voice(payload)
    if not ctx.supports_uploaded or payload.get("ref_audio") is not None or payload.get("references"):
        return None
    if not voice or voice.lower() == "default":
        return None
    found = ctx.voices.resolve(voice)
    if found is None:
        if ctx.requires_uploaded:
            raise bad_request(
                f"Unknown voice '{voice}'. Upload a voice first via POST /v1/audio/voices, or use ref_audio "
                "+ ref_text.",
                param="voice",
            )
        return None
    task_type = payload.get("task_type")
    if task_type is not None and _normalize_task_type(str(task_type)) != "Base":
        raise bad_request("uploaded voice requests require task_type='Base'", param="task_type")
    stored, _audio = found
    reference = LoadedReference(
        duration_s=stored.duration_s, digest=f"voice:{stored.normalized_name}", text=stored.ref_text
    )
    return stored.name, reference


def _references(payload: dict[str, object], ctx: SpeechContext) -> list[LoadedReference]:
    loaded: list[LoadedReference] = []
    for item in payload.get("references") or []:
        assert isinstance(item, dict)
        text = item.get("text") if isinstance(item.get("text"), str) else None
        if isinstance(item.get("data"), str):
            media_type = item.get("media_type") if isinstance(item.get("media_type"), str) else "audio/wav"
            ref = load_base64_reference(str(media_type), str(item["data"]), param="references.data")
        else:
            ref = None
            for key in ("audio_path", "ref_audio", "audio"):
                if isinstance(item.get(key), str):
                    ref = load_reference(str(item[key]), ctx.media, param=f"references.{key}")
                    break
            if ref is None:
                ref = LoadedReference(duration_s=0.0, digest="text-only")
        loaded.append(LoadedReference(ref.duration_s, ref.digest, text))
    return loaded


def prepare_speech(payload: object, ctx: SpeechContext) -> PreparedSpeech:
    """Run the API process's checks on a decoded JSON body; raise :class:`ApiError` on the first failure."""
    if not isinstance(payload, dict):
        raise bad_request("speech request body must be a JSON object")
    _raw_type_checks(payload)
    _schema_checks(payload)
    fmt, stream, speed, task_type = _semantic_checks(payload, ctx)
    uploaded = _uploaded_reference(payload, ctx)
    references: list[LoadedReference] = []
    ref_audio = payload.get("ref_audio")
    if isinstance(ref_audio, str):
        single = load_reference(ref_audio, ctx.media, param="ref_audio")
    references.extend(_references(payload, ctx))
    if isinstance(ref_audio, str):
        ref_text = payload.get("ref_text")
        references.append(
            LoadedReference(single.duration_s, single.digest, ref_text if isinstance(ref_text, str) else None)
        )
    elif uploaded is not None:
        references.append(uploaded[1])
        task_type = "Base"
    family = ctx.model.family
    if family.reference_required_count is not None and len(references) != family.reference_required_count:
        raise bad_request(
            "exactly one speech reference is required", param="ref_audio" if not references else "references"
        )
    if family.reference_text_required and any(not (ref.text or "").strip() for ref in references):
        raise bad_request("reference transcript is required", param="ref_text")
    return PreparedSpeech(
        payload=payload,
        input=str(payload["input"]),
        voice=_voice(payload),
        response_format=fmt,
        speed=speed,
        stream=stream,
        stream_format=str(payload.get("stream_format") or "audio"),
        task_type=task_type,
        task_type_explicit=payload.get("task_type") is not None and str(payload["task_type"]).strip() != "",
        references=tuple(references),
        uploaded_voice=uploaded[0] if uploaded else None,
        has_ref_audio_field=isinstance(ref_audio, str),
    )


def _qwen_checks(req: PreparedSpeech, model: ResolvedModel) -> None:
    has_reference = bool(req.references) or req.get("ref_text") is not None
    task = req.task_type or ("Base" if has_reference else "CustomVoice")
    has_audio = any(ref.digest != "text-only" for ref in req.references)
    has_text = any(ref.text is not None for ref in req.references) or req.get("ref_text") is not None
    if task == "Base":
        if not has_audio:
            raise bad_request(
                "Qwen3-TTS Base requires reference audio via ref_audio or references[0].audio_path"
            )
        if req.get("x_vector_only_mode") is False and not has_text:
            raise bad_request(
                "Qwen3-TTS Base requires non-empty ref_text unless x_vector_only_mode is enabled"
            )
    else:
        for name, present in (
            ("ref_audio", has_audio),
            ("ref_text", has_text),
            ("x_vector_only_mode", req.get("x_vector_only_mode") is not None),
        ):
            if present:
                raise bad_request(f"Qwen3-TTS {task} does not accept {name}")
        if task == "VoiceDesign" and not str(req.get("instructions") or "").strip():
            raise bad_request("Qwen3-TTS VoiceDesign requires instructions")
    kind = model.qwen_kind
    if kind == "base" and task != "Base":
        if not req.task_type_explicit:
            raise bad_request(
                "Qwen3-TTS Base requires ref_audio or speaker_embedding; "
                "text-only requests require a CustomVoice or VoiceDesign checkpoint"
            )
        raise bad_request(f"Qwen3-TTS Base checkpoint does not support {task}")
    if kind == "custom_voice" and task != "CustomVoice":
        raise bad_request(f"Qwen3-TTS CustomVoice checkpoint does not support {task}")
    if kind == "voice_design" and task != "VoiceDesign":
        raise bad_request(f"Qwen3-TTS VoiceDesign checkpoint does not support {task}")


def _voxtral_checks(req: PreparedSpeech, model: ResolvedModel) -> None:
    unsupported = {
        name
        for name in ("temperature", "top_p", "top_k", "repetition_penalty", "seed")
        if req.get(name) is not None
    }
    if req.get("stage_params"):
        unsupported.add("stage_params")
    unsupported |= {
        name
        for name in ("task_type", "language", "instructions", "ref_audio", "ref_text")
        if req.get(name) not in (None, "")
    }
    if req.references:
        unsupported.add("references")
    if unsupported:
        raise internal_error(
            f"Voxtral TTS does not support these /v1/audio/speech fields: {', '.join(sorted(unsupported))}. "
            "Supported model-specific fields are voice and max_new_tokens."
        )
    if req.voice not in ("", "default") and req.voice not in model.presets:
        # The real tokenizer fails on a name missing from params.json; the text here is the fake's.
        raise internal_error(f"Voxtral voice '{req.voice}' is not a preset of this checkpoint")


def _family_checks(req: PreparedSpeech, model: ResolvedModel) -> None:
    package = model.family.package
    if package == "qwen3_tts":
        _qwen_checks(req, model)
    elif package == "voxtral_tts":
        _voxtral_checks(req, model)
    elif package == "zonos2" and req.get("seed") is not None:
        raise internal_error("ZONOS2 does not support seed because sampling uses the shared device RNG")
    elif package == "dots_tts" and req.task_type not in (None, "Base"):
        raise internal_error("dots.tts base support accepts template_name in ['tts', 'instruction_tts']")
    for ref in req.references:
        if ref.duration_s is None:
            if package == "zonos2":
                raise internal_error("Reference file must contain an audio stream supported by ffmpeg.")
            raise bad_request("Could not decode reference audio input")
        limit = model.family.max_reference_s
        if limit is not None and ref.duration_s > limit:
            raise internal_error(f"reference_audio is too long ({ref.duration_s:.1f}s); cap at {limit:.0f}s.")


def _words(text: object) -> int:
    return len(str(text).split()) if isinstance(text, str) else 0


def _input_tokens(req: PreparedSpeech, model: ResolvedModel) -> int:
    tokens = _TOKENS_PER_WORD * _words(req.input)
    tokens += sum(_TOKENS_PER_WORD * _words(ref.text) for ref in req.references)
    if model.family.package in ("qwen3_tts", "moss_tts", "moss_tts_local", "dots_tts"):
        tokens += _TOKENS_PER_WORD * _words(req.get("instructions"))
    seconds = sum(ref.duration_s or 0.0 for ref in req.references)
    return tokens + int(round(_TOKENS_PER_REFERENCE_S * seconds))


def _max_new_tokens(req: PreparedSpeech, ctx: SpeechContext) -> int:
    family = ctx.model.family
    requested = req.get("max_new_tokens")
    limit = family.request_max_new_tokens_limit
    if isinstance(requested, int) and limit is not None and requested > limit:
        raise bad_request(f"max_new_tokens must be between 1 and {limit}")
    tokens = requested if isinstance(requested, int) else family.default_max_new_tokens
    if ctx.factory_max_new_tokens is not None:
        tokens = min(tokens, ctx.factory_max_new_tokens)
    return tokens


def _wanted_seconds(req: PreparedSpeech, ctx: SpeechContext) -> float:
    family = ctx.model.family
    if family.package in ("moss_tts", "moss_tts_local"):
        explicit = req.get("token_count") or req.get("duration_tokens")
        match = re.match(r"^\s*\$\{token:(\d+)\}", req.input)
        if isinstance(explicit, int):
            return explicit / family.tokens_per_s
        if match:
            return int(match.group(1)) / family.tokens_per_s
    return max(_words(req.input), 1) * ctx.seconds_per_word


def kv_capacity_message(input_tokens: int, max_new_tokens: int, capacity: int) -> str:
    """The scheduler's exact refusal text, with the ``engine.kv_cache_bytes`` hint."""
    return (
        "Request requires more tokens than the thinker KV cache can hold "
        f"(input_tokens={input_tokens}, max_new_tokens={max_new_tokens}, "
        f"required_tokens={input_tokens + max_new_tokens}, kv_capacity={capacity}). "
        "Try raising engine.kv_cache_bytes."
    )


def plan_generation(req: PreparedSpeech, ctx: SpeechContext) -> GenerationPlan:
    """Model-side checks, token accounting and the resulting audio length (raises :class:`ApiError`)."""
    model = ctx.model
    _family_checks(req, model)
    max_new_tokens = _max_new_tokens(req, ctx)
    prompt_tokens = _input_tokens(req, model)
    if ctx.kv_capacity is not None and prompt_tokens + max_new_tokens > ctx.kv_capacity:
        raise bad_request(kv_capacity_message(prompt_tokens, max_new_tokens, ctx.kv_capacity))
    seconds = _wanted_seconds(req, ctx)
    needed = math.ceil(seconds * model.family.tokens_per_s)
    finish = "stop"
    if needed > max_new_tokens:
        needed, seconds, finish = max_new_tokens, max_new_tokens / model.family.tokens_per_s, "length"
    voice_key = "|".join([req.voice, *(ref.digest for ref in req.references)])
    if req.task_type == "VoiceDesign":  # a designed voice is its description
        voice_key += f"|design:{req.get('instructions')}"
    return GenerationPlan(seconds / req.speed, finish, prompt_tokens, needed, voice_key, max_new_tokens,
                          model.family.tokens_per_s)

