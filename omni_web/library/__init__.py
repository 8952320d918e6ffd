"""The library: books queued, steered and found (submit, duplicates and name claims, presets and
rules, intake from upload, inbox, link and OPDS, notifications), over the job queue of
:mod:`omni_web.jobs`."""

from omni_web.library.deletion import JobDeletion
from omni_web.library.estimate import Estimate, estimate_book, measured_rate
from omni_web.library.fetch import fetch_book
from omni_web.library.files import JobFile, file_kind, job_files, reported_files
from omni_web.library.inbox import InboxWatcher, Outcome, inbox_refusals
from omni_web.library.intake import books_dir, keep_book, keep_book_bytes
from omni_web.library.kinds import (
    CATALOG_KEY,
    CONVERT_JOB,
    TEXT_FINGERPRINT_KEY,
    ConvertExtras,
    fix_of,
    fix_wait_reason,
    is_fix,
    same_server_work,
)
from omni_web.library.library import Library
from omni_web.library.notify import Notifier, Targets, split_urls
from omni_web.library.opds import OpdsClient, OpdsEntry, OpdsFeed, apply_catalog_metadata, parse_feed
from omni_web.library.presets import CHAPTER_POLICIES, RULE_FIELDS, Preset, PresetBook, Rule
from omni_web.library.runner import make_convert_runner, sample_request
from omni_web.library.sources import BookSource, Link, Prepared, Submitted, Upload

__all__ = [
    "CATALOG_KEY",
    "CHAPTER_POLICIES",
    "CONVERT_JOB",
    "RULE_FIELDS",
    "TEXT_FINGERPRINT_KEY",
    "BookSource",
    "ConvertExtras",
    "Estimate",
    "InboxWatcher",
    "JobDeletion",
    "JobFile",
    "Library",
    "Link",
    "Notifier",
    "OpdsClient",
    "OpdsEntry",
    "OpdsFeed",
    "Outcome",
    "Prepared",
    "Preset",
    "PresetBook",
    "Rule",
    "Submitted",
    "Targets",
    "Upload",
    "apply_catalog_metadata",
    "books_dir",
    "estimate_book",
    "file_kind",
    "fetch_book",
    "fix_of",
    "fix_wait_reason",
    "inbox_refusals",
    "is_fix",
    "job_files",
    "keep_book",
    "keep_book_bytes",
    "make_convert_runner",
    "measured_rate",
    "parse_feed",
    "reported_files",
    "same_server_work",
    "sample_request",
    "split_urls",
]
