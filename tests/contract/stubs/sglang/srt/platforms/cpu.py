"""Import stub: `CpuDeviceMixin`, a base class of sglang-omni's `sglang_omni/platforms/cpu.py` platform."""

from sglang.srt.platforms.device_mixin import DeviceMixin, PlatformEnum

__all__ = ["CpuDeviceMixin"]


class CpuDeviceMixin(DeviceMixin):
    platform = PlatformEnum.CPU
    device_type = "cpu"
