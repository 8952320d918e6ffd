"""Mastering: even loudness, room tone, delivery presets and reports, ACX export.

Chunks are leveled to each other (one gain per take), laid over room tone, limited, and each
chapter is measured (BS.1770, ffmpeg's ebur128) while the book renders and normalised with
loudnorm in linear mode (or kept as encoded when it measures on target)::

    options = MasterOptions(get_preset("audiobook"), AudioFormat(24000, 1))
    master = BookMaster(specs, parts_dir, options)      # one worker pool per book
    master.chunk_done(key, path)                        # from the renderer, for every chunk
    records = master.results()                          # MasteredChapter per spec, in order
    measure_file(records[0].m4a).failures(options.preset)

Depends on the assembly layer (ffmpeg runner, formats) only; the pipeline wires it in.
"""

from omni_web.master.book import BookMaster, ChapterReadySink, ChapterStateSink
from omni_web.master.chapter import master_chapter
from omni_web.master.levels import FileLevels, measure_file
from omni_web.master.presets import DEFAULT_PRESET, PRESET_NAMES, PRESETS, LoudnessPreset, get_preset
from omni_web.master.records import (
    ChapterSpec,
    ChapterState,
    MasteredChapter,
    MasteringAborted,
    MasterOptions,
)
from omni_web.master.report import LevelsReport, read_levels_report, summary_lines
from omni_web.master.versions import write_work_keys

__all__ = [
    "ChapterState",
    "DEFAULT_PRESET",
    "PRESETS",
    "PRESET_NAMES",
    "BookMaster",
    "ChapterReadySink",
    "ChapterStateSink",
    "ChapterSpec",
    "FileLevels",
    "LevelsReport",
    "LoudnessPreset",
    "MasterOptions",
    "MasteredChapter",
    "MasteringAborted",
    "get_preset",
    "master_chapter",
    "measure_file",
    "read_levels_report",
    "summary_lines",
    "write_work_keys",
]
