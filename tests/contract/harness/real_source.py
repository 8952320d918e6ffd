"""Run real sglang-omni functions whose modules cannot be imported without a GPU stack.

Executed only inside the contract venv. Some of the functions the contract tier
needs live in modules whose top-level imports pull half of SGLang's CUDA
runtime (`sglang_omni.models.qwen3_tts.request_builders`,
`sglang_omni.scheduling.omni_scheduler`). Rather than stub dozens of SGLang
names, `load_tolerantly` executes the installed module's own source statement
by statement and skips the top-level statements that fail (imports of CUDA-only
modules and whatever is built from them). Every function that survives is the
real function, compiled from the real file; it only fails if it reaches a name
that was skipped, and then it fails loudly with NameError.

`real_method` does the same for one method of a class whose base class cannot
be imported (OmniScheduler subclasses SGLang's Scheduler).
"""

from __future__ import annotations
import __future__

import ast
import importlib.util
import sys
import types
from collections.abc import Callable
from pathlib import Path

__all__ = ["load_tolerantly", "real_method"]

_PREFIX = "_omni_web_contract_real."
_FUTURE_FLAGS = __future__.annotations.compiler_flag


def _module_source(module_name: str) -> tuple[Path, ast.Module]:
    spec = importlib.util.find_spec(module_name)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"{module_name} is not installed in this venv")
    path = Path(spec.origin)
    return path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def load_tolerantly(module_name: str) -> types.ModuleType:
    """Execute `module_name`'s real source, skipping top-level statements that fail.

    The result is registered as `_omni_web_contract_real.<module_name>` (never
    under the real name, so a later real import is not shadowed). Its attribute
    `__skipped__` lists the source lines of the statements that were skipped.
    """
    cached = sys.modules.get(_PREFIX + module_name)
    if cached is not None:
        return cached
    path, tree = _module_source(module_name)
    module = types.ModuleType(_PREFIX + module_name)
    module.__file__ = str(path)
    module.__package__ = module_name.rpartition(".")[0]
    module.__skipped__ = []
    sys.modules[module.__name__] = module
    for statement in tree.body:
        code = compile(ast.Module(body=[statement], type_ignores=[]), str(path), "exec", flags=_FUTURE_FLAGS)
        try:
            exec(code, module.__dict__)  # noqa: S102 - the installed sglang-omni source, by design
        except Exception:  # noqa: BLE001 - a statement that needs the GPU stack is skipped
            module.__skipped__.append(statement.lineno)
    return module


def real_method(module_name: str, class_name: str, method_name: str) -> Callable[..., object]:
    """Return one method of `class_name`, compiled from the real source, as a plain function.

    Its globals are the tolerantly loaded module, so module-level helpers it
    calls are the real ones too. Call it with a stand-in for `self`.
    """
    module = load_tolerantly(module_name)
    path, tree = _module_source(module_name)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == method_name:
                    namespace: dict[str, object] = {}
                    code = compile(
                        ast.Module(body=[item], type_ignores=[]), str(path), "exec", flags=_FUTURE_FLAGS
                    )
                    exec(code, module.__dict__, namespace)  # noqa: S102 - the installed source, by design
                    return namespace[method_name]
    raise LookupError(f"{module_name}.{class_name}.{method_name} not found in the installed source")
