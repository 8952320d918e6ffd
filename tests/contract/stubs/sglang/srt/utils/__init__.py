"""Import stub: the `sglang.srt.utils` package (only its `network` module is stubbed)."""
