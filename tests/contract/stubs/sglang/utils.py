"""Import stub: `LazyImport`, which `sglang_omni/utils/audio.py` uses at import time
(`LazyImport("sglang_omni.platforms", "current_platform")`): a proxy that imports the named
attribute on first use, as the real one does."""

import importlib

__all__ = ["LazyImport"]


class LazyImport:
    def __init__(self, module_name, class_name):
        self.module_name = module_name
        self.class_name = class_name
        self._target = None

    def _load(self):
        if self._target is None:
            self._target = getattr(importlib.import_module(self.module_name), self.class_name)
        return self._target

    def __getattr__(self, name):
        return getattr(self._load(), name)

    def __call__(self, *args, **kwargs):
        return self._load()(*args, **kwargs)
