"""Import stub: `XpuDeviceMixin`, a base class of sglang-omni's `sglang_omni/platforms/xpu.py` platform."""

from sglang.srt.platforms.device_mixin import DeviceMixin, PlatformEnum

__all__ = ["XpuDeviceMixin"]


class XpuDeviceMixin(DeviceMixin):
    platform = PlatformEnum.XPU
    device_type = "xpu"
