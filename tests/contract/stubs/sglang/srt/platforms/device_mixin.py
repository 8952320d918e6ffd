"""Import stub: `DeviceMixin` (base of sglang-omni's `OmniPlatform`) and `PlatformEnum`.

Only the `is_<device>()` queries `sglang_omni.platforms.as_omni_platform` asks and the
`device_type` attribute `OmniPlatform.get_device_graph_backend` reads are provided.
"""

import enum

__all__ = ["DeviceMixin", "PlatformEnum"]


class PlatformEnum(enum.Enum):
    CUDA = "cuda"
    ROCM = "rocm"
    CPU = "cpu"
    XPU = "xpu"
    NPU = "npu"
    MPS = "mps"
    MUSA = "musa"
    OOT = "oot"


class DeviceMixin:
    platform = PlatformEnum.CPU
    device_type = "cpu"
    device_name = "cpu"

    def is_cuda(self):
        return self.platform is PlatformEnum.CUDA

    def is_rocm(self):
        return self.platform is PlatformEnum.ROCM

    def is_cpu(self):
        return self.platform is PlatformEnum.CPU

    def is_xpu(self):
        return self.platform is PlatformEnum.XPU

    def is_npu(self):
        return self.platform is PlatformEnum.NPU

    def is_mps(self):
        return self.platform is PlatformEnum.MPS

    def is_musa(self):
        return self.platform is PlatformEnum.MUSA
