"""Import stub: `SRTPlatform`, which `sglang_omni/platforms/__init__.py` type-checks against."""

from sglang.srt.platforms.device_mixin import DeviceMixin

__all__ = ["SRTPlatform"]


class SRTPlatform(DeviceMixin):
    pass
