"""Import stub: `RocmDeviceMixin`, a base class of sglang-omni's `sglang_omni/platforms/rocm.py` platform."""

from sglang.srt.platforms.device_mixin import DeviceMixin, PlatformEnum

__all__ = ["RocmDeviceMixin"]


class RocmDeviceMixin(DeviceMixin):
    platform = PlatformEnum.ROCM
    device_type = "cuda"
