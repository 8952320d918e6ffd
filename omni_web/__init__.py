"""omni-web: EPUB to audiobook with the TTS models that SGLang-Omni serves."""

__all__ = ["__version__"]

__version__ = "0.1.0"
