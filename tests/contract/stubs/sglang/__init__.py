"""Import stub of SGLang for the omni-web contract venv (not the real package).

sglang 0.5.22 needs CUDA 13 kernels (sgl-kernel, flashinfer), so the contract venv does not
install it. sglang-omni's HTTP layer, CLI and config loader import only the few names stubbed in
this tree; see the README section "Contract tests" for the list and why each is there.
"""
