"""The one replaced part of the contract server: the GPU pipeline behind the real client.

Executed only inside the contract venv, by `run_app.py`. sglang-omni's
`run_server` (`sglang_omni/serve/launcher.py`) builds
`MultiProcessPipelineRunner(pipeline_config)`, awaits `start()`, and hands
`runner.coordinator` to the real `Client`, which the real `create_app` serves.
`StubPipelineRunner` stands in for that runner and `StubCoordinator` for the
coordinator; everything above them (CLI, config loader, launcher, uvicorn, the
FastAPI app, request validation, voices store, error mapping, audio encoding)
is the installed sglang-omni 0.1.9 code.

What a request meets behind the coordinator:
1. The model's own preprocessing checks, run as the real functions:
   Qwen3-TTS `build_qwen3_tts_state` and `validate_qwen3_tts_model_task`
   (`models/qwen3_tts/request_builders.py`, checkpoint kind from the
   checkpoint's `config.json`), Voxtral `validate_voxtral_speech_params`
   (`models/voxtral_tts/pipeline/stages.py`).
2. The reference clip, if any, decoded by the real
   `sglang_omni.preprocessing.audio.decode_audio_bytes`.
3. The AR scheduler's KV admission check, the real
   `OmniScheduler.request_kv_capacity_error` (`scheduling/omni_scheduler.py`)
   with `max_req_len` = the capacity in `CONTRACT_STUB_KV_CAPACITY` (default
   4095, a 4096-token context). Input tokens are approximated (below).
4. Speech: espeak-ng reads the input text; the clip is resampled to the
   model's native rate (the table below) by the real `resample_linear`.
A stage error crosses to the coordinator as text (`error_text`) and comes back
as `QueueFullError.from_message(...)`, the real path of a stage failure, so the
HTTP status and message are the ones the real server sends.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import math
import os
import shutil
import subprocess
import tempfile
import types
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import numpy as np

__all__ = ["StubCoordinator", "StubPipelineRunner", "install"]

logger = logging.getLogger("omni_web.contract.stub_pipeline")

# Native output rate and channels per pipeline class (sglang-omni 0.1.9: Qwen3-TTS,
# Higgs, MOSS-TTS and Voxtral 24 kHz; S2-Pro and ZONOS2 44.1 kHz (DAC);
# MOSS-TTS-Local 48 kHz stereo; dots.tts 48 kHz from its vocoder config).
NATIVE_AUDIO = {
    "Qwen3TTSPipelineConfig": (24000, 1),
    "HiggsTtsPipelineConfig": (24000, 1),
    "MossTTSPipelineConfig": (24000, 1),
    "MossTTSLocalPipelineConfig": (48000, 2),
    "VoxtralTTSPipelineConfig": (24000, 1),
    "DotsTTSPipelineConfig": (48000, 1),
    "S2ProPipelineConfig": (44100, 1),
    "Zonos2PipelineConfig": (44100, 1),
}
# Families whose AR stage the stub puts through the KV admission check with the
# request's own max_new_tokens: the ones the API notes say do not clamp it first.
KV_CHECKED = {
    "HiggsTtsPipelineConfig",
    "Zonos2PipelineConfig",
    "DotsTTSPipelineConfig",
    "S2ProPipelineConfig",
}
DEFAULT_MAX_NEW_TOKENS = {
    "HiggsTtsPipelineConfig": 2048,
    "S2ProPipelineConfig": 1024,
    "Zonos2PipelineConfig": 1024,
}
# Prompt tokens are approximated: a chat-template overhead plus one token per four UTF-8 bytes.
PROMPT_OVERHEAD_TOKENS = 32
STREAM_CHUNK_S = 0.5


def approximate_input_tokens(text: str) -> int:
    """The stub's stand-in for the model tokenizer (documented in the README)."""
    return PROMPT_OVERHEAD_TOKENS + math.ceil(len(text.encode("utf-8")) / 4)


def speak(text: str, sample_rate: int, channels: int) -> np.ndarray:
    """Speech for `text` from espeak-ng, float32 at `sample_rate`, shape (n,) or (channels, n)."""
    import soundfile
    from sglang_omni.preprocessing.audio import resample_linear

    espeak = shutil.which("espeak-ng")
    if espeak is None:
        raise RuntimeError("contract stub: espeak-ng is not installed (scripts/test.sh installs it)")
    with tempfile.TemporaryDirectory(prefix="omni-contract-tts-") as tmp:
        wav = Path(tmp) / "speech.wav"
        text_file = Path(tmp) / "input.txt"
        text_file.write_text(text, encoding="utf-8")
        subprocess.run([espeak, "-w", str(wav), "-f", str(text_file)], check=True, capture_output=True)  # noqa: S603
        audio, rate = soundfile.read(str(wav), dtype="float32")
    audio = resample_linear(np.asarray(audio, dtype=np.float32), int(rate), sample_rate)
    return np.stack([audio] * channels) if channels > 1 else audio


def _reference_bytes(reference: object) -> bytes | None:
    """Bytes of a reference as the HTTP layer hands it on.

    A descriptor dict carries raw base64 (`data`) or a string (`audio_path`, `ref_audio`,
    `audio`); a string is a data URL (inline clips, uploaded voices) or a server-side path.
    """
    if isinstance(reference, dict):
        if reference.get("data"):
            return base64.b64decode(str(reference["data"]))
        reference = reference.get("audio_path") or reference.get("ref_audio") or reference.get("audio")
    if not isinstance(reference, str) or not reference:
        return None
    if reference.startswith("data:"):
        return base64.b64decode(reference.partition(",")[2])
    return Path(reference).read_bytes()


class FamilyChecks:
    """The model-side checks one pipeline class runs before its AR stage."""

    def __init__(self, pipeline_config: object) -> None:
        self.config = pipeline_config
        self.cls_name = type(pipeline_config).__name__
        self.checks: list[Callable[[object], None]] = [self.decode_references]
        if self.cls_name == "Qwen3TTSPipelineConfig":
            self.checks.insert(0, self.qwen3_tts)
        elif self.cls_name == "VoxtralTTSPipelineConfig":
            self.checks.insert(0, self.voxtral)
        if self.cls_name in KV_CHECKED:
            self.checks.append(self.kv_capacity)

    def run(self, payload: object) -> None:
        """Raise what the real stages would raise for this request."""
        for check in self.checks:
            check(payload)

    def qwen3_tts(self, payload: object) -> None:
        from real_source import load_tolerantly

        builders = load_tolerantly("sglang_omni.models.qwen3_tts.request_builders")
        state = builders.build_qwen3_tts_state(payload)
        checkpoint = self.config.load_engine_checkpoint_config()
        model = types.SimpleNamespace(tts_model_type=checkpoint.get("tts_model_type"))
        builders.validate_qwen3_tts_model_task(model, state)

    def voxtral(self, payload: object) -> None:
        from sglang_omni.models.voxtral_tts.pipeline.stages import validate_voxtral_speech_params

        tts_params = (payload.request.metadata or {}).get("tts_params", {})
        validate_voxtral_speech_params(
            inputs=payload.request.inputs,
            params=payload.request.params or {},
            tts_params=tts_params if isinstance(tts_params, dict) else {},
        )

    def decode_references(self, payload: object) -> None:
        from sglang_omni.preprocessing.audio import decode_audio_bytes

        inputs = payload.request.inputs
        tts_params = (payload.request.metadata or {}).get("tts_params") or {}
        references = list(inputs.get("references") or []) if isinstance(inputs, dict) else []
        if tts_params.get("ref_audio"):
            references.append(tts_params["ref_audio"])
        for reference in references:
            data = _reference_bytes(reference)
            if data is not None:
                decode_audio_bytes(data)

    def kv_capacity(self, payload: object) -> None:
        import sglang.srt.runtime_context as runtime_context
        from real_source import real_method

        check = real_method(
            "sglang_omni.scheduling.omni_scheduler", "OmniScheduler", "request_kv_capacity_error"
        )
        params = payload.request.params or {}
        max_new_tokens = int(params.get("max_new_tokens", DEFAULT_MAX_NEW_TOKENS.get(self.cls_name, 2048)))
        cap = self.factory_max_new_tokens()
        if cap is not None:
            max_new_tokens = min(max_new_tokens, cap)
        runtime_context.set_schedule(mem_fraction_static=self.engine_mem_fraction())
        scheduler = types.SimpleNamespace(max_req_len=kv_capacity_tokens(), tp_worker=None)
        req = types.SimpleNamespace(
            origin_input_ids=[0] * approximate_input_tokens(_text_of(payload)),
            sampling_params=types.SimpleNamespace(max_new_tokens=max_new_tokens),
        )
        message = check(scheduler, req)
        if message is not None:
            raise ValueError(message)

    def engine_stage(self) -> object:
        stages = [stage for stage in self.config.stages if stage.engine is not None]
        return stages[0]

    def factory_max_new_tokens(self) -> int | None:
        factory = self.engine_stage().factory
        value = getattr(factory, "max_new_tokens", None) if factory is not None else None
        return int(value) if value is not None else None

    def engine_mem_fraction(self) -> float | None:
        stage = self.engine_stage()
        explicit = stage.engine.mem_fraction_static if stage.engine is not None else None
        return explicit if explicit is not None else stage.gpu_memory_fraction


def kv_capacity_tokens() -> int:
    """The KV capacity the stub scheduler admits against (CONTRACT_STUB_KV_CAPACITY)."""
    return int(os.environ.get("CONTRACT_STUB_KV_CAPACITY", "4095"))


def _text_of(payload: object) -> str:
    inputs = payload.request.inputs
    if isinstance(inputs, dict):
        return str(inputs.get("text", ""))
    return str(inputs or "")


class StubCoordinator:
    """Answers `Client` the way the real `Coordinator` does, with audio from `speak`."""

    def __init__(self, pipeline_config: object) -> None:
        self.config = pipeline_config
        self.family = FamilyChecks(pipeline_config)
        self.sample_rate, self.channels = NATIVE_AUDIO[type(pipeline_config).__name__]
        self.running = True
        self.total_requests = 0
        self.stage_names = [stage.name for stage in pipeline_config.stages]

    def health(self) -> dict[str, object]:
        """Same keys as `CoordinatorHealth`."""
        return {
            "running": self.running,
            "stages": list(self.stage_names),
            "entry_stage": self.config.resolved_entry_stage,
            "total_requests": self.total_requests,
            "pending_completions": 0,
            "request_states": {},
            "stream_delivery": {
                "stream_backlog_bytes": 0,
                "open_stream_count": 0,
                "generation_finished_stream_count": 0,
                "longest_reader_idle_s": 0.0,
                "failed_stream_count": 0,
            },
        }

    async def _generate(self, request_id: str, request: object) -> tuple[np.ndarray, dict[str, object]]:
        from sglang_omni.admission import QueueFullError
        from sglang_omni.pipeline.stage.runtime import error_text
        from sglang_omni.proto import StagePayload

        self.total_requests += 1
        payload = StagePayload(request_id=request_id, request=request, data=None)
        try:
            self.family.run(payload)
            audio = await asyncio.to_thread(speak, _text_of(payload), self.sample_rate, self.channels)
        except Exception as exc:
            # A stage failure reaches the coordinator as text (CompleteMessage.error).
            raise QueueFullError.from_message(error_text(exc)) from None
        frames = audio.shape[-1]
        usage = {
            "prompt_tokens": approximate_input_tokens(_text_of(payload)),
            "completion_tokens": max(1, round(frames / self.sample_rate * 12.5)),
        }
        return audio, usage

    def _payload(self, audio: np.ndarray) -> dict[str, object]:
        """The relay format a real vocoder stage sends (`audio_waveform_payload`)."""
        from sglang_omni.utils.audio_payload import audio_waveform_payload

        return audio_waveform_payload(
            audio, sample_rate=self.sample_rate, modality="audio", keep_channels=self.channels > 1
        )

    async def submit(self, request_id: str, request: object) -> dict[str, object]:
        """Non-streaming: one result with the whole clip, like the vocoder's terminal result."""
        audio, usage = await self._generate(request_id, request)
        return {**self._payload(audio), "finish_reason": "stop", **usage}

    async def stream(self, request_id: str, request: object) -> AsyncIterator[object]:
        """Streaming: audio deltas as StreamMessages, then the terminal CompleteMessage."""
        from sglang_omni.proto.messages import CompleteMessage, StreamMessage

        audio, usage = await self._generate(request_id, request)
        step = int(self.sample_rate * STREAM_CHUNK_S)
        for start in range(0, audio.shape[-1], step):
            chunk = self._payload(audio[..., start : start + step])
            yield StreamMessage(
                request_id=request_id,
                from_stage="vocoder",
                chunk=chunk,
                stage_name="vocoder",
                modality="audio",
            )
        yield CompleteMessage(
            request_id=request_id,
            from_stage="vocoder",
            success=True,
            result={"finish_reason": "stop", "sample_rate": self.sample_rate, **usage},
        )

    async def abort(self, request_id: str) -> bool:
        return True

    def get_request_info(self, request_id: str) -> None:
        return None


class StubPipelineRunner:
    """Stands in for `MultiProcessPipelineRunner`: no stage processes, one stub coordinator."""

    def __init__(self, pipeline_config: object) -> None:
        self.coordinator = StubCoordinator(pipeline_config)
        self.prep = types.SimpleNamespace(
            placement_plan=types.SimpleNamespace(gpus={}),
            process_plan=types.SimpleNamespace(groups=[], tp_stage_to_processes={}),
            logical_process_plan=types.SimpleNamespace(processes=[types.SimpleNamespace(num_replicas=1)]),
        )
        self.stage_control_endpoints: dict[str, str] = {}
        self.stage_http_routes: list[object] = []
        self._stopped = asyncio.Event()

    async def start(self, timeout: float | None = None) -> None:
        logger.info(
            "Stub pipeline for %s (%s Hz): %s",
            type(self.coordinator.config).__name__,
            self.coordinator.sample_rate,
            json.dumps(self.coordinator.stage_names),
        )

    async def wait_failed(self) -> None:
        await self._stopped.wait()

    async def stop(self) -> None:
        self.coordinator.running = False


def install() -> None:
    """Put the stub runner where `sglang_omni.serve.launcher` imports it from."""
    import sys

    module = types.ModuleType("sglang_omni.pipeline.mp_runner")
    module.MultiProcessPipelineRunner = StubPipelineRunner
    module.__doc__ = "omni-web contract stub: " + (__doc__ or "").splitlines()[0]
    sys.modules["sglang_omni.pipeline.mp_runner"] = module
