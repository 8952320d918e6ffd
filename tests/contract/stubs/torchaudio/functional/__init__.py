"""Import stub: `torchaudio.functional` (see `torchaudio/__init__.py`)."""

from torchaudio.functional import functional

__all__ = ["functional", "resample"]


def resample(*args, **kwargs):
    raise RuntimeError("torchaudio is an import stub in the contract venv (torchaudio.functional.resample)")
