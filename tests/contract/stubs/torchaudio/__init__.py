"""Import stub of torchaudio for the omni-web contract venv (not the real package).

`sglang_omni/utils/audio.py` imports torchaudio at module level; its functions use it only to
resample or decode on the torchaudio path, which the HTTP layer's voices store and our stub
pipeline never take (they decode with PyAV/soundfile and resample with `resample_linear`). PyPI's
torchaudio wheels are built against CUDA torch, so a call raises instead of running.
"""

from torchaudio import functional

__all__ = ["functional", "load"]


def load(*args, **kwargs):
    raise RuntimeError("torchaudio is an import stub in the contract venv (torchaudio.load)")
