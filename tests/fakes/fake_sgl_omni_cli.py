"""Argument and config handling of the fake ``sgl-omni serve`` (API doc 1.2-1.4 and the appendix).

Click's parsing is imitated closely enough that a client sees the same outcomes: known options
(hyphen spellings, plus the ``_`` aliases the real CLI declares) are taken, everything else is
kept as an extra argument and paired into dotted per-stage overrides, which are checked against
the model's stage names. Every refusal is a :class:`BadParameter` (``Error: Invalid value: ...``,
exit 2) or a :class:`UsageError` (Click's own texts, exit 2).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from tests.fakes.fake_sgl_omni_models import Family

__all__ = [
    "LOG_LEVELS",
    "BadParameter",
    "ServeOptions",
    "StageSettings",
    "UsageError",
    "load_config_file",
    "pair_extra_args",
    "parse_serve_argv",
    "resolve_settings",
    "validate_media_path",
]

LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
_VALUE_OPTIONS = {
    "--model-path": "model_path",
    "--config": "config",
    "--variant": "variant",
    "--host": "host",
    "--port": "port",
    "--model-name": "model_name",
    "--allowed-local-media-path": "allowed_local_media_path",
    "--allowed_local_media_path": "allowed_local_media_path",
    "--allowed-media-domain": "allowed_media_domain",
    "--allowed_media_domain": "allowed_media_domain",
    "--tts-batch-max-items": "tts_batch_max_items",
    "--mem-fraction-static": "mem_fraction_static",
    "--stage-offload-components": "stage_offload_components",
    "--stage_offload_components": "stage_offload_components",
    "--log-level": "log_level",
}
_FLAG_OPTIONS = {
    "--text-only": "text_only",
    "--colocate": "colocate",
    "--enable-realtime": "enable_realtime",
    "--enable_realtime": "enable_realtime",
    "--skip-server-warmup": "skip_server_warmup",
    "--skip_server_warmup": "skip_server_warmup",
    "--help": "help",
}
_STAGE_FIELDS = (
    "name",
    "factory_path",
    "next",
    "terminal",
    "route_fn",
    "gpu",
    "tp_size",
    "process",
    "allow_child_processes",
    "runtime_gpu_ids",
    "gpu_memory_fraction",
    "total_reserve_bytes",
    "enforce_total_reserve",
    "engine",
    "factory",
    "env",
    "wait_for",
    "wait_for_fn",
    "merge_fn",
    "stream_to",
    "stream_done_to_fn",
    "can_accept_stream_before_payload",
    "disable_direct_cuda_ipc_payload",
    "project_payload",
    "comm",
    "http_routes",
)
_GROUPS = ("engine", "factory", "env")
_INT_KEYS = {
    "tp_size",
    "max_new_tokens",
    "max_running_requests",
    "max_total_tokens",
    "cuda_graph_max_bs",
    "torch_compile_max_bs",
    "context_length",
    "max_concurrency",
    "max_batch_size",
    "kv_cache_bytes",
    "max_queued_requests",
}
_FLOAT_KEYS = {"mem_fraction_static", "gpu_memory_fraction", "cpu_offload_gb"}


class UsageError(Exception):
    """A Click usage error: printed as ``Error: <message>``, exit 2."""


class BadParameter(UsageError):
    """``typer.BadParameter``: printed as ``Error: Invalid value: <message>``, exit 2."""


@dataclass(slots=True)
class ServeOptions:
    """The parsed ``serve`` options plus the tokens Click would leave in ``ctx.args``."""

    model_path: str | None = None
    config: str | None = None
    variant: str | None = None
    host: str = "0.0.0.0"
    port: int = 8000
    model_name: str | None = None
    allowed_local_media_path: str | None = None
    allowed_media_domain: list[str] = field(default_factory=list)
    tts_batch_max_items: int = 32
    mem_fraction_static: float | None = None
    stage_offload_components: str | None = None
    log_level: str = "info"
    text_only: bool = False
    colocate: bool = False
    enable_realtime: bool = False
    skip_server_warmup: bool = False
    help: bool = False
    extra: list[str] = field(default_factory=list)


def _convert(option: str, attr: str, value: str) -> object:
    if attr in ("port", "tts_batch_max_items"):
        try:
            return int(value)
        except ValueError:
            raise UsageError(f"Invalid value for '{option}': '{value}' is not a valid integer.") from None
    if attr == "mem_fraction_static":
        try:
            return float(value)
        except ValueError:
            raise UsageError(f"Invalid value for '{option}': '{value}' is not a valid float.") from None
    if attr == "log_level" and value not in LOG_LEVELS:
        choices = ", ".join(f"'{level}'" for level in LOG_LEVELS)
        raise UsageError(f"Invalid value for '{option}': '{value}' is not one of {choices}.")
    return value


def parse_serve_argv(argv: list[str]) -> ServeOptions:
    """Parse ``serve`` arguments the way Click does with ``ignore_unknown_options``."""
    opts = ServeOptions()
    tokens = list(argv)
    while tokens:
        token = tokens.pop(0)
        name, eq, inline = token.partition("=")
        if token in _FLAG_OPTIONS:
            setattr(opts, _FLAG_OPTIONS[token], True)
        elif name in _VALUE_OPTIONS:
            if eq:
                value = inline
            elif tokens:
                value = tokens.pop(0)
            else:
                raise UsageError(f"Option '{name}' requires an argument.")
            attr = _VALUE_OPTIONS[name]
            converted = _convert(name, attr, value)
            if attr == "allowed_media_domain":
                opts.allowed_media_domain.append(value)
            else:
                setattr(opts, attr, converted)
        else:
            opts.extra.append(token)
    return opts


def pair_extra_args(args: list[str]) -> list[tuple[str, str]]:
    """``ConfigManager.parse_extra_args``: ``--k v`` or ``--k=v`` pairs, first segment de-hyphenated."""
    pairs: list[tuple[str, str]] = []
    key: str | None = None
    for arg in args:
        if key is None and "=" in arg:
            raw_key, value = arg.split("=", 1)
            pairs.append((_normalize_key(raw_key), value))
        elif key is None:
            key = arg
        else:
            pairs.append((_normalize_key(key), arg))
            key = None
    if key is not None:
        raise BadParameter(f"Missing value for argument: {key}")
    return pairs


def _normalize_key(key: str) -> str:
    head, sep, rest = key.lstrip("-").partition(".")
    return head.replace("-", "_") + sep + rest


def _scalar(text: object) -> object:
    if not isinstance(text, str):
        return text
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


# -- config files ---------------------------------------------------------------------------------


def _yaml_loader() -> type:
    import yaml  # only when a config file is given: keeps the no-config start fast

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):  # type: ignore[no-untyped-def]
            seen: set[object] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if isinstance(key, dict | list | set):
                    continue
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate mapping key {key!r}", key_node.start_mark
                    )
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return Loader


_REMOVED_BLOCKS = {
    "stage_overrides": "the stage_overrides block was removed; write the same settings under the stages: "
                       "mapping, "
    "e.g. stages.<name>.gpu_memory_fraction",
    "runtime_overrides": "runtime_overrides was removed; write stages.<name>.engine.* or "
                         "stages.<name>.factory.* "
    "instead",
    "entry_stage": "entry_stage is not user configuration; the entry stage is declared by the model's config "
                   "class",
}


def load_config_file(path: str) -> dict[str, object]:
    """Read a pipeline YAML (duplicate keys refused) and check its top-level shape; BadParameter on error."""
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            try:
                data = yaml.load(handle, Loader=_yaml_loader())  # noqa: S506 - a SafeLoader subclass
            except yaml.YAMLError as exc:
                raise BadParameter(f"Config file {path!r} is not valid YAML: {exc}") from exc
    except FileNotFoundError as exc:
        raise BadParameter(f"Config file {path!r} does not exist") from exc
    if not isinstance(data, dict):
        raise BadParameter(f"Config file {path!r} must contain a mapping")
    for block, guidance in _REMOVED_BLOCKS.items():
        if block in data:
            raise BadParameter(f"Config file {path!r}: {guidance}")
    if "config_cls" not in data:
        raise BadParameter(f"Config file {path!r} must name its pipeline class in config_cls")
    return data


# -- stage settings -------------------------------------------------------------------------------


@dataclass(slots=True)
class StageSettings:
    """Resolved per-stage settings, keyed ``(stage, group, field)``; group "" for stage-level fields."""

    values: dict[tuple[str, str, str], object] = field(default_factory=dict)
    explicit_mem_fraction: dict[str, float] = field(default_factory=dict)
    name: str | None = None

    def get(self, stage: str, group: str, name: str, default: object = None) -> object:
        """One setting, or ``default``."""
        return self.values.get((stage, group, name), default)


def _suggest(word: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(word, candidates, n=3, cutoff=0.5)
    return "\n  did you mean: " + ", ".join(close or candidates[:5]) if candidates else ""


def _stage_path(family: Family, stage: str, parts: list[str], raw: str) -> tuple[str, str, str]:
    prefix = f"stages.{stage}"
    head = parts[0]
    if head == "engine" and stage != family.engine_stage:
        raise BadParameter(
            f"{prefix} is not an engine stage: the engine block only exists on stages whose factory drives "
            "an "
            "SGLang engine, so there is nothing for engine settings to reach here"
        )
    if head not in _STAGE_FIELDS:
        raise BadParameter(
            f"StageConfig has no field {head!r} at {prefix!r}" + _suggest(head, sorted(_STAGE_FIELDS))
        )
    if head in _GROUPS:
        if len(parts) < 2:
            raise BadParameter(
                f"--{raw} addresses a settings group, not a single value; write one field below it, "
                f"e.g. --{raw}.<field> <value>"
            )
        return stage, head, ".".join(parts[1:])
    return stage, "", head


def _dotted_path(family: Family, key: str) -> tuple[str, str, str] | None:
    """Canonicalize one dotted CLI key; None for an accepted top-level field."""
    parts = key.split(".")
    head, rest = parts[0], parts[1:]
    if head == "stages" and rest:
        raise BadParameter(
            f"--{key}: the stages. prefix is implied on the command line; write --{'.'.join(rest)}"
        )
    if head in family.stages and rest:
        return _stage_path(family, head, rest, key)
    if head in family.stages:
        raise BadParameter(f"{key!r} names a whole stage; write one field below it, e.g. --{head}.tp_size")
    if head not in family.top_level_fields:
        candidates = sorted(set(family.stages) | set(family.top_level_fields))
        raise BadParameter(
            f"{key!r} does not start from a stage name or a top-level configuration field of "
            f"{family.config_cls}\n"
            f"  stages of this pipeline: {', '.join(family.stages)}" + _suggest(head, candidates)
        )
    return None


def _coerce(path: tuple[str, str, str], value: object) -> object:
    stage, group, name = path
    value = _scalar(value)
    where = ".".join(part for part in ("stages", stage, group, name) if part)
    if name in _INT_KEYS and isinstance(value, float):
        raise BadParameter(f"{where} expects an integer, got a float ({value!r})")
    if (name in _INT_KEYS or name in _FLOAT_KEYS) and isinstance(value, bool):
        raise BadParameter(f"{where} expects a number, got a boolean")
    return value


def _yaml_stage_settings(family: Family, stages: object, settings: StageSettings) -> None:
    if isinstance(stages, list):
        raise BadParameter(
            "stages must be a mapping keyed by stage name; the list form is no longer accepted. "
            "Move each entry under its name and drop the name: key:\n\n    stages:\n      thinker:\n"
            "        tp_size: 2"
        )
    if not isinstance(stages, dict):
        raise BadParameter(
            f"stages must be a mapping from stage name to stage settings, got {type(stages).__name__}"
        )
    for stage, body in stages.items():
        if not isinstance(body, dict):
            raise BadParameter(f"stages.{stage} must be a mapping")
        if "name" in body:
            raise BadParameter(f"stages.{stage} must not set name: the mapping key is the stage's name")
        if stage not in family.stages:
            raise BadParameter(
                f"stages.{stage}: no stage named {stage!r} in {family.config_cls}; stage topology lives in "
                "the "
                f"model's config class. This pipeline has: {', '.join(family.stages)}"
            )
        for key, value in body.items():
            if key in _GROUPS and isinstance(value, dict):
                for sub, sub_value in value.items():
                    path = _stage_path(family, stage, [key, str(sub)], f"{stage}.{key}.{sub}")
                    settings.values[path] = _coerce(path, sub_value)
            else:
                path = _stage_path(family, stage, [str(key)], f"{stage}.{key}")
                settings.values[path] = _coerce(path, value)


def _validation_error(
    family: Family, path: tuple[str, str, str], message: str, kind: str, value: object
) -> str:
    stage, group, name = path
    loc = ".".join(part for part in ("stages", str(family.stages.index(stage)), group, name) if part)
    return (
        f"1 validation error for {family.config_cls}\n{loc}\n  {message} [type={kind}, "
        f"input_value={value!r}, "
        f"input_type={type(value).__name__}]"
    )


def _check_ranges(family: Family, settings: StageSettings) -> None:
    for path, value in settings.values.items():
        name = path[2]
        if name not in ("mem_fraction_static", "gpu_memory_fraction") or value is None:
            continue
        if not isinstance(value, int | float):
            raise BadParameter(
                _validation_error(family, path, "Input should be a valid number", "float_type", value)
            )
        if value <= 0:
            raise BadParameter(
                _validation_error(family, path, "Input should be greater than 0", "greater_than", value)
            )
        if name == "mem_fraction_static" and value >= 1:
            raise BadParameter(
                _validation_error(family, path, "Input should be less than 1", "less_than", value)
            )
        if name == "gpu_memory_fraction" and value > 1:
            raise BadParameter(
                _validation_error(
                    family, path, "Input should be less than or equal to 1", "less_than_equal", value
                )
            )
    for stage in family.stages:
        if settings.get(stage, "engine", "kv_cache_bytes") is not None and (
            settings.get(stage, "engine", "mem_fraction_static") is not None
        ):
            raise BadParameter(
                "engine.kv_cache_bytes cannot be set together with engine.mem_fraction_static; if the "
                "fraction comes "
                "from the pipeline's built-in defaults, set mem_fraction_static: null on the same stage"
            )


def resolve_settings(
    family: Family,
    *,
    file_data: dict[str, object] | None,
    pairs: list[tuple[str, str]],
    mem_fraction_static: float | None,
) -> StageSettings:
    """Merge the file's stages, ``--mem-fraction-static`` and dotted flags (highest wins, API doc appendix)."""
    settings = StageSettings()
    if file_data is not None:
        for key in file_data:
            if key not in (*family.top_level_fields, "config_cls"):
                raise BadParameter(
                    f"{family.config_cls} has no field {key!r}"
                    + _suggest(str(key), sorted(family.top_level_fields))
                )
        if isinstance(file_data.get("name"), str):
            settings.name = str(file_data["name"])
        if file_data.get("stages") is not None:
            _yaml_stage_settings(family, file_data["stages"], settings)
    if mem_fraction_static is not None:
        path = (family.engine_stage, "engine", "mem_fraction_static")
        settings.values[path] = mem_fraction_static
    for key, value in pairs:
        path = _dotted_path(family, key)
        if path is None:
            if key == "name":
                settings.name = value
            continue
        settings.values[path] = _coerce(path, value)
    _check_ranges(family, settings)
    for (stage, group, name), value in settings.values.items():
        if group == "engine" and name == "mem_fraction_static" and isinstance(value, int | float):
            settings.explicit_mem_fraction[stage] = float(value)
    return settings


def validate_media_path(value: str | None) -> Path | None:
    """``--allowed-local-media-path`` must be an existing directory."""
    if value is None:
        return None
    resolved = Path(value).expanduser().resolve()
    if not resolved.is_dir():
        raise BadParameter(f"allowed local media path must be a directory: {value}")
    return resolved
