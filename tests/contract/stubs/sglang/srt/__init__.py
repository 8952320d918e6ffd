"""Import stub: the `sglang.srt` package (see `sglang/__init__.py`)."""
