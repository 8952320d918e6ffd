"""Import stub: `CudaDeviceMixin`, a base class of sglang-omni's `sglang_omni/platforms/cuda.py` platform."""

from sglang.srt.platforms.device_mixin import DeviceMixin, PlatformEnum

__all__ = ["CudaDeviceMixin"]


class CudaDeviceMixin(DeviceMixin):
    platform = PlatformEnum.CUDA
    device_type = "cuda"
