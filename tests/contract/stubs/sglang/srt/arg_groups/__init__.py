"""Import stub: the `sglang.srt.arg_groups` package."""
