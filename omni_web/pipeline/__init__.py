"""The conversion pipeline: plan → render → assemble, and the server a run talks to."""

from omni_web.pipeline.convert import (
    ConvertResult,
    ProgressCallback,
    prepare_cast,
    prepare_voice,
    run_conversion,
)
from omni_web.pipeline.plan import (
    ChapterWork,
    ConversionPlan,
    chunk_size_conflict,
    narrator_label,
    pause_ms,
    plan_conversion,
    select_chapters,
)
from omni_web.pipeline.progress import ChapterProgress, ConvertProgress, PhaseProgress, PhaseState
from omni_web.pipeline.rebuild import rebuild_chapters
from omni_web.pipeline.request import (
    ConvertRequest,
    cast_from_dict,
    cast_to_dict,
    parse_chapter_spec,
    voice_from_dict,
    voice_to_dict,
)
from omni_web.pipeline.serving import convert_served, first_gpu_compute_capability, serving_for

__all__ = [
    "ChapterProgress",
    "ChapterWork",
    "ConversionPlan",
    "ConvertProgress",
    "PhaseProgress",
    "PhaseState",
    "ConvertRequest",
    "ConvertResult",
    "ProgressCallback",
    "cast_from_dict",
    "cast_to_dict",
    "chunk_size_conflict",
    "convert_served",
    "first_gpu_compute_capability",
    "narrator_label",
    "parse_chapter_spec",
    "pause_ms",
    "plan_conversion",
    "prepare_cast",
    "prepare_voice",
    "rebuild_chapters",
    "run_conversion",
    "select_chapters",
    "serving_for",
    "voice_from_dict",
    "voice_to_dict",
]
