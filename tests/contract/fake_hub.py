"""A Hugging Face cache holding only the checkpoint metadata sglang-omni reads before loading weights.

The contract runs set `HF_HOME` to this folder and `HF_HUB_OFFLINE=1`, so the real
`hf_hub_download` in sglang-omni finds these files in the standard cache layout
(`hub/models--<org>--<name>/refs/main` + `snapshots/<commit>/<file>`) and never opens a
connection. Only what the real code reads at start-up is here:
- Qwen3-TTS `config.json`: `tts_model_type` decides CustomVoice / VoiceDesign / Base and
  `talker_config.spk_id` is the CustomVoice speaker list (`Qwen3TTSPipelineConfig.
  resolve_custom_voice_config`); the speakers are the nine the model card lists.
- ZONOS2 `params.json` with `model_type: zonos2`: how `--model-path` alone resolves its pipeline
  class (`try_resolve_arch_from_mistral_config`), used when omni-web starts ZONOS2 with no config.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["QWEN3_CUSTOM_VOICE_SPEAKERS", "REPO_FILES", "write_fake_hub"]

QWEN3_CUSTOM_VOICE_SPEAKERS = (
    "vivian", "serena", "uncle_fu", "dylan", "eric", "ryan", "aiden", "ono_anna", "sohee",
)


def _qwen3_config(kind: str) -> dict[str, object]:
    config: dict[str, object] = {
        "architectures": ["Qwen3TTSForConditionalGeneration"],
        "model_type": "qwen3_tts",
        "tts_model_type": kind,
    }
    if kind == "custom_voice":
        config["talker_config"] = {
            "spk_id": {name: 3000 + i for i, name in enumerate(QWEN3_CUSTOM_VOICE_SPEAKERS)}
        }
    return config


REPO_FILES: dict[str, dict[str, dict[str, object]]] = {
    "Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice": {"config.json": _qwen3_config("custom_voice")},
    "Qwen/Qwen3-TTS-12Hz-0.6B-Base": {"config.json": _qwen3_config("base")},
    "Qwen/Qwen3-TTS-12Hz-1.7B-Base": {"config.json": _qwen3_config("base")},
    "Qwen/Qwen3-TTS-12Hz-1.7B-VoiceDesign": {"config.json": _qwen3_config("voice_design")},
    "Zyphra/ZONOS2": {"params.json": {"model_type": "zonos2"}},
}


def write_fake_hub(hf_home: Path) -> Path:
    """Write every repo of REPO_FILES under `hf_home/hub`; return `hf_home`."""
    for index, (repo_id, files) in enumerate(REPO_FILES.items(), start=1):
        repo_dir = hf_home / "hub" / ("models--" + repo_id.replace("/", "--"))
        commit = f"{index:040x}"
        snapshot = repo_dir / "snapshots" / commit
        snapshot.mkdir(parents=True, exist_ok=True)
        (repo_dir / "refs").mkdir(parents=True, exist_ok=True)
        (repo_dir / "refs" / "main").write_text(commit, encoding="utf-8")
        for name, content in files.items():
            (snapshot / name).write_text(json.dumps(content), encoding="utf-8")
    return hf_home
