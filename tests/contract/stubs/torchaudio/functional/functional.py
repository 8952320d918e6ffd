"""Import stub: `torchaudio.functional.functional`, referenced by name only inside
`sglang_omni/utils/audio.py` functions the contract tier does not call."""
