"""``queue``: add books to the app's job queue and steer it, over the same store the web UI reads.

    python -m omni_web queue add BOOK... --model KEY [--voice NAME] [--priority N]
    python -m omni_web queue list
    python -m omni_web queue move JOB top|up|down|bottom
    python -m omni_web queue pause [JOB]      (no JOB: the whole queue)
    python -m omni_web queue resume [JOB]
    python -m omni_web queue cancel JOB
    python -m omni_web queue samples on|off [--minutes N]
    python -m omni_web queue opds URL [--user U --password P] [--search WORDS] [--take 1,3 --preset NAME]

The running web app's worker takes what is queued here (it looks at the queue every second).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from omni_web.catalog import get_entry, keys
from omni_web.client import VoiceChoice
from omni_web.jobs import MOVES, Job, JobStore, QueueControl
from omni_web.paths import DataPaths, data_root_from_env

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``queue`` and its actions."""
    parser = subparsers.add_parser("queue", help="queue books for the web app's worker and steer the queue",
                                   description="Add books to the job queue, list it, reorder and pause it.")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="queue one job per book")
    add.add_argument("books", nargs="+", type=Path, metavar="BOOK")
    add.add_argument("--model", choices=keys(), metavar="KEY", help="catalog key (or take it from --preset)")
    add.add_argument("--voice", metavar="NAME", help="built-in speaker or uploaded voice name")
    add.add_argument("--preset", metavar="NAME", help="a saved preset's settings (else the rules pick one)")
    add.add_argument("--priority", type=int, default=0, help="higher runs first (default 0)")
    add.set_defaults(handler=_add)
    actions.add_parser("list", help="the queue in run order, then running jobs").set_defaults(handler=_list)
    move = actions.add_parser("move", help="move a queued job")
    move.add_argument("job")
    move.add_argument("where", choices=MOVES)
    move.set_defaults(handler=_move)
    for name, verb in (("pause", "hold"), ("resume", "release")):
        sub = actions.add_parser(name, help=f"{verb} the whole queue, or one job")
        sub.add_argument("job", nargs="?")
        sub.set_defaults(handler=_pause if name == "pause" else _resume)
    cancel = actions.add_parser("cancel", help="cancel a job (a running one stops at its next chunk)")
    cancel.add_argument("job")
    cancel.set_defaults(handler=_cancel)
    opds = actions.add_parser("opds", help="browse or search an OPDS catalog; --take queues entries")
    opds.add_argument("url", help="the catalog's (or a section's) OPDS URL")
    opds.add_argument("--user", default="", help="basic auth user")
    opds.add_argument("--password", default="", help="basic auth password")
    opds.add_argument("--search", metavar="WORDS", help="search the catalog instead of listing the feed")
    opds.add_argument("--take", metavar="N,M", help="queue these entries (numbers as listed)")
    opds.add_argument("--preset", metavar="NAME", help="settings for the queued books (else the rules)")
    opds.set_defaults(handler=_opds)
    samples = actions.add_parser(
        "samples", help="samples first: every book's first chapter before any full book"
    )
    samples.add_argument("switch", choices=("on", "off"))
    samples.add_argument(
        "--minutes",
        type=float,
        metavar="N",
        help="samples of at least N minutes (whole chapters from the start; default: chapter 1)",
    )
    samples.set_defaults(handler=_samples)


def _control() -> tuple[DataPaths, QueueControl]:
    paths = data_root_from_env().ensure()
    return paths, QueueControl(JobStore(paths.jobs_db))


def _line(job: Job, place: int | None = None) -> str:
    marks = "".join(
        (
            " [paused]" if job.paused else "",
            f" [priority {job.priority}]" if job.priority else "",
            " [sample made]" if job.sample_done else "",
        )
    )
    where = f"{place:>3}." if place else f"{job.state.value:>9}"
    return f"{where} {job.id}  {job.title}{marks}"


def _add(args: argparse.Namespace) -> int:
    from omni_web.services import AppServices  # the worker is not started: the app's worker runs them

    paths = data_root_from_env().ensure()
    services = AppServices.create(paths)
    voice = VoiceChoice.speaker(args.voice) if args.voice else None
    for book in args.books:
        job = services.library.submit_book(
            book.expanduser().resolve(),
            model_key=args.model and get_entry(args.model).key,
            voice=voice,
            preset=args.preset,
            priority=args.priority,
        )
        print(f"queued {job.id}  {job.title}")
    return 0


def _list(args: argparse.Namespace) -> int:
    _, control = _control()
    status = control.status()
    print(
        f"queue: {'PAUSED' if status.paused else 'running'}; samples first: "
        f"{'on' if status.samples_first else 'off'}"
    )
    for place, job in enumerate(status.queued, start=1):
        print(_line(job, place))
    for job in control.store.list():
        if job.state.value == "running":
            print(_line(job) + (" (sample)" if job.is_sample_run else ""))
    return 0


def _move(args: argparse.Namespace) -> int:
    _, control = _control()
    control.move(args.job, args.where)
    return _list(args)


def _pause(args: argparse.Namespace) -> int:
    _, control = _control()
    if args.job:
        print(_line(control.pause_job(args.job)))
    else:
        control.pause()
        print("queue paused: no new job starts (a running one finishes)")
    return 0


def _resume(args: argparse.Namespace) -> int:
    _, control = _control()
    if args.job:
        print(_line(control.resume_job(args.job)))
    else:
        control.resume()
        print("queue running")
    return 0


def _cancel(args: argparse.Namespace) -> int:
    _, control = _control()
    print(_line(control.store.request_cancel(args.job)))
    return 0


def _opds(args: argparse.Namespace) -> int:
    from omni_web.library import OpdsClient
    from omni_web.services import AppServices

    client = OpdsClient(args.url, username=args.user, password=args.password)
    feed = client.search(args.search) if args.search else client.feed()
    for number, entry in enumerate(feed.entries, start=1):
        what = (
            f"book by {', '.join(entry.authors) or 'unknown'}"
            if entry.acquisition
            else f"section: {entry.navigation}"
        )
        series = f" [{' '.join(filter(None, (entry.series, entry.series_index)))}]" if entry.series else ""
        print(f"{number:>3}. {entry.title}{series} ({what})")
    if feed.next:
        print(f"more: {feed.next}")
    if args.take:
        services = AppServices.create(data_root_from_env().ensure())
        for number in (int(n) for n in args.take.split(",") if n.strip()):
            job = services.library.submit_from_catalog(feed.entries[number - 1], client, preset=args.preset)
            print(f"queued {job.id}  {job.title}")
    return 0


def _samples(args: argparse.Namespace) -> int:
    _, control = _control()
    control.set_samples_first(args.switch == "on")
    if args.minutes is not None:
        control.set_sample_minutes(args.minutes)
    length = f"at least {control.sample_minutes:g} min" if control.sample_minutes else "the first chapter"
    print(f"samples first: {args.switch} (each sample: {length})")
    return 0
