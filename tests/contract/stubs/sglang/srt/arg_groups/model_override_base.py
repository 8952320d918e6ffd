"""Import stub: `resolved_view`, imported by `sglang_omni/platforms/{interface,cuda,rocm,xpu}.py`.

It is only called when an engine worker applies its backend policy, which the contract tier
never reaches; the stub returns its argument unchanged.
"""

__all__ = ["resolved_view"]


def resolved_view(server_args):
    return server_args
