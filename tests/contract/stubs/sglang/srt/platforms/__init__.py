"""Import stub: `sglang.srt.platforms.current_platform`, a CPU platform.

`sglang_omni/platforms/__init__.py` maps SGLang's current platform onto its own platform classes
at import time; on this stub it picks `CPUOmniPlatform`, the platform sglang-omni uses on a
machine without an accelerator.
"""

from sglang.srt.platforms.cpu import CpuDeviceMixin
from sglang.srt.platforms.interface import SRTPlatform

__all__ = ["current_platform"]


class _CpuPlatform(CpuDeviceMixin, SRTPlatform):
    pass


current_platform = _CpuPlatform()
