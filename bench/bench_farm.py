"""Benchmark: a farm of 1, 2 and 3 "boxes", each an agent process with its own data root and one
fake GPU (the fake `sgl-omni`), joined with a farm token to an app side whose router is the REAL
SGLang-Omni router (contract venv).

Rows:
- efficiency for N boxes: C chunks rendered by omni-web's renderer through the router at the
  concurrency a group uses (GroupCapacity); ideal = ceil(C / (N*B)) * L; speed-up against 1 box;
- join: seconds from starting `agent join` on a new box, mid-book, to the first request routed to it;
- kill: a box SIGKILLed (agent and its server) mid-book: chunks lost (missing at the end);
- switch: the queue's next book needs another model once a book ends: every box is drained,
  stopped, booted with the new model and routed again (all at once); each box's idle seconds (its
  first request of the new book minus its last of the old one) against its server's boot time.

    .venv/bin/python bench/bench_farm.py [--chunks 120] [--slots 4] [--latency 0.5] [--boot 5]

Every process is started here and stopped by its own pid. Not a test: it prints numbers.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_throughput import MODEL, generated_items  # noqa: E402

from omni_web.catalog import get_entry  # noqa: E402
from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice  # noqa: E402
from omni_web.errors import OmniWebError  # noqa: E402
from omni_web.farm import FarmRegistry, FarmWatcher, farm_token_store  # noqa: E402
from omni_web.paths import DataPaths  # noqa: E402
from omni_web.render import render_chunks  # noqa: E402
from omni_web.server.capacity import GroupCapacity  # noqa: E402
from omni_web.server.router import read_router_health  # noqa: E402
from tests.contract.setup_env import ensure_contract_venv  # noqa: E402
from tests.fakes.fake_hf_hub import FakeHub, FakeRepo  # noqa: E402
from tests.fakes.sgl_omni import install_router  # noqa: E402
from tests.farm.farmkit import (  # noqa: E402
    fake_backend_wheel,
    start_agent,
    start_farm_app,
    start_router,
    wait_for,
)

OTHER_MODEL = "qwen3_tts_0_6b_base"  # the queue's next book needs it (switch row)


class Farm:
    """The app side (registry, farm API, router) and the boxes of one bench scenario."""

    def __init__(self, work: Path, router_exe: Path, env: dict[str, str]) -> None:
        self.work = work
        self.env = env
        self.router_exe = router_exe
        self.target: tuple[str, str] | None = None
        paths = DataPaths(root=work / "app").ensure()
        self.registry = FarmRegistry(paths, lambda: self.target)
        self.app = start_farm_app(self.registry)
        self.secret = farm_token_store(paths).create("bench")[1]
        self.agents: list = []
        self.router = None

    def request_log(self, index: int) -> Path:
        return self.work / f"box{index}-requests.jsonl"

    def add_box(self, *, bare_env: dict[str, str] | None = None):
        """A box set up earlier, or (``bare_env``: where pip and the hub are) one with nothing on it."""
        index = len(self.agents)
        env = {**self.env, **(bare_env or {}), "FAKE_SGL_REQUEST_LOG": str(self.request_log(index))}
        agent = start_agent(self.app.url, self.secret, self.work / f"box{index}", gpus="0", env=env,
                            bare=bare_env is not None)
        self.agents.append(agent)
        return agent

    def first_box_and_router(self) -> None:
        """Box 0 serves, the router starts in front of it, and the farm targets that router."""
        self.add_box()
        box = wait_for(lambda: self.registry.boxes(), "box 0 to join", 60)[0]
        status = self.registry.call_agent(box, "POST", "/serve", {"model": MODEL}, timeout_s=120)
        self.router = start_router(self.router_exe, [w["url"] for w in status["workers"]], self.work)
        self.target = (self.router.url, MODEL)
        self.registry.place(box.id)

    def routable(self) -> int:
        health = read_router_health(self.router.url, timeout_s=2)
        return health.routable_workers if health is not None else 0

    def routed(self, index: int) -> int:
        log = self.request_log(index)
        return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0

    def stop(self) -> None:
        for agent in self.agents:
            agent.stop(signal.SIGTERM)
        if self.router is not None:
            self.router.stop()
        self.app.stop()


def render(farm: Farm, chunks: int, slots: int, salt: str, cache: Path, *, model: str = MODEL,
           voice: VoiceChoice | None = None) -> tuple[float, int]:
    """Render ``chunks`` through the farm's router; (wall seconds, chunks missing at the end)."""
    items = generated_items(chunks, 20, salt=salt)
    entry = get_entry(model)
    voice = voice or VoiceChoice.speaker("Vivian")
    with SpeechClient(farm.router.url, local_server=False) as client:

        def synthesize(item):
            return client.speech(entry, SpeechRequest(text=item.text, voice=voice)).audio

        started = time.perf_counter()
        try:
            capacity = GroupCapacity(farm.router.url, slots)
            render_chunks(items, synthesize, cache_dir=cache, concurrency=capacity)
        except OmniWebError as exc:
            print(f"  render stopped: {exc}")
        wall = time.perf_counter() - started
    missing = sum(1 for item in items if not (cache / f"{item.key}.wav").is_file())
    return wall, missing


def efficiency(n_boxes: int, args: argparse.Namespace, router_exe: Path, work: Path) -> dict:
    farm = Farm(work / f"eff{n_boxes}", router_exe, _env(args))
    try:
        farm.first_box_and_router()
        for _ in range(n_boxes - 1):
            farm.add_box()
        try:
            wait_for(lambda: farm.routable() == n_boxes, f"{n_boxes} routable workers", 180)
        except AssertionError:
            for box in farm.registry.boxes():
                print(f"  box {box.name}: {box.state} {box.worker_urls} {box.message}")
            raise
        salt = f"farm-{n_boxes}-{time.time()}"
        wall, missing = render(farm, args.chunks, args.slots, salt, farm.work / "chunks")
        ideal = math.ceil(args.chunks / (n_boxes * args.slots)) * args.latency
        return {"n": n_boxes, "wall": wall, "ideal": ideal, "missing": missing,
                "routed": [farm.routed(i) for i in range(n_boxes)]}
    finally:
        farm.stop()


def join_and_kill(args: argparse.Namespace, router_exe: Path, work: Path) -> dict:
    """One box renders; a bare box joins mid-book (timed: it installs the backend and downloads the
    model first), then a set-up one joins (timed) and is killed once it has work."""
    farm = Farm(work / "faults", router_exe, _env(args))
    watcher = FarmWatcher(farm.registry, interval_s=1.0)
    result: dict = {}
    try:
        farm.first_box_and_router()
        watcher.start()
        chunks = args.chunks * 3
        done = threading.Event()

        def run() -> None:
            result["wall"], result["missing"] = render(farm, chunks, args.slots, f"faults-{time.time()}",
                                                       farm.work / "chunks")
            done.set()

        threading.Thread(target=run, daemon=True).start()
        wait_for(lambda: farm.routed(0) >= args.slots, "box 0 to get work", 60)
        with FakeHub([FakeRepo(get_entry(MODEL).repo_id, {"config.json": b'{"model_type": "tts"}'})]) as hub:
            wheels = fake_backend_wheel(farm.work / "wheels")
            bare = farm.work / "box1"
            joined = time.monotonic()
            farm.add_box(bare_env={"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels.parent),
                                   "HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(bare / "hf-cache")})
            wait_for(lambda: farm.routed(1) > 0, "the bare box 1 to get a request", 300)
            result["bare_join_s"] = time.monotonic() - joined
        joined = time.monotonic()
        agent = farm.add_box()
        wait_for(lambda: farm.routed(2) > 0, "box 2 to get a request", 180)
        result["join_s"] = time.monotonic() - joined
        wait_for(lambda: farm.routed(2) >= 3 * args.slots, "box 2 to be busy", 120)
        box = next(b for b in farm.registry.boxes() if b.agent_url and b.name == "box2")
        pids = [w["pid"] for w in farm.registry.call_agent(box, "GET", "/status", timeout_s=5)["workers"]]
        for pid in pids:
            os.killpg(pid, signal.SIGKILL)  # a power cut: the server and the agent at once
        os.killpg(agent.popen.pid, signal.SIGKILL)
        result["killed_at"] = farm.routed(2)
        wait_for(done.is_set, "the book to finish", 600)
        result["chunks"] = chunks
        return result
    finally:
        watcher.stop()
        farm.stop()


class RequestTimes:
    """Samples each box's request count on a thread: when each request was first seen."""

    def __init__(self, farm: Farm, boxes: int) -> None:
        self.farm = farm
        self.times: list[list[float]] = [[] for _ in range(boxes)]
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.done.wait(0.02):
            now = time.monotonic()
            for index, seen in enumerate(self.times):
                seen.extend([now] * (self.farm.routed(index) - len(seen)))

    def stop(self) -> None:
        self.done.set()
        self.thread.join()


def reference_clip(path: Path) -> Path:
    """Two seconds of a spoken line for the clone model's book (espeak-ng)."""
    subprocess.run(["espeak-ng", "-w", str(path), "This is the voice the second book is read in."],
                   check=True, capture_output=True)
    return path


def switch(args: argparse.Namespace, router_exe: Path, work: Path, boxes: int) -> dict:
    """``boxes`` boxes render a book; the next needs another model: the farm switches and renders it."""
    env = {**_env(args), "FAKE_SGL_BOOT_DELAY_S": str(args.boot)}
    farm = Farm(work / "switch", router_exe, env)
    try:
        farm.first_box_and_router()
        for _ in range(boxes - 1):
            farm.add_box()
        wait_for(lambda: farm.routable() == boxes, f"{boxes} routable workers", 180)
        times = RequestTimes(farm, boxes)
        render(farm, args.chunks, args.slots, f"switch-a-{time.time()}", farm.work / "a")
        ended = [max(seen) for seen in times.times]
        switched = time.monotonic()
        farm.target = (farm.router.url, OTHER_MODEL)  # what the group serves for the queue's next book
        placed = farm.registry.place_all()  # the farm watcher's step: every box at once
        switch_s = time.monotonic() - switched
        clip = reference_clip(farm.work / "narrator.wav")
        voice = VoiceChoice.clone(clip, "This is the voice the second book is read in.")
        _wall, missing = render(farm, args.chunks, args.slots, f"switch-b-{time.time()}", farm.work / "b",
                                model=OTHER_MODEL, voice=voice)
        times.stop()
        idle = [min(t for t in seen if t > end) - end for seen, end in zip(times.times, ended, strict=True)]
        return {"boxes": boxes, "idle": idle, "switch_s": switch_s, "missing": missing,
                "states": [b.state for b in placed]}
    finally:
        farm.stop()


def _env(args: argparse.Namespace) -> dict[str, str]:
    return {"FAKE_SGL_SLOTS": str(args.slots), "FAKE_SGL_LATENCY_S": str(args.latency),
            "FAKE_SGL_SECONDS_PER_WORD": "0.01"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=120)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--boxes", default="1,2,3")
    parser.add_argument("--boot", type=float, default=5.0, help="the fake server's boot seconds (switch row)")
    args = parser.parse_args()
    venv = ensure_contract_venv()
    with tempfile.TemporaryDirectory(prefix="bench-farm-") as tmp:
        work = Path(tmp)
        router_exe = install_router(work / "router-venv", venv.python)
        print(f"real router (sglang-omni 0.1.9); boxes = agent processes, 1 fake GPU each; C={args.chunks} "
              f"chunks, B={args.slots} slots, L={args.latency:g} s")
        print(f"{'boxes':>5} {'ideal s':>8} {'wall s':>8} {'vs ideal':>8} {'speed-up':>8}  "
              "requests per box   lost")
        rows: list[dict] = []
        for n in args.boxes.split(","):
            rows.append(efficiency(int(n), args, router_exe, work))
            r = rows[-1]
            one = rows[0]["wall"] if rows[0]["n"] == 1 else None
            speed = f"{one / r['wall']:.2f}x" if one else "-"
            batch = f"{(one / r['wall']) / r['n']:.3f}" if one else "-"
            print(f"{r['n']:>5} {r['ideal']:>8.2f} {r['wall']:>8.2f} {r['ideal'] / r['wall']:>8.3f} "
                  f"{speed:>8}  "
                  f"{' / '.join(map(str, r['routed'])):<18} {r['missing']:>4}   efficiency vs 1 box: {batch}")
        faults = join_and_kill(args, router_exe, work)
        print(f"join mid-book, bare box: {faults['bare_join_s']:.1f} s from `agent join` to its first routed "
              "request (venv made, backend pip-installed, model downloaded, server booted)")
        print(f"join mid-book, set-up box: {faults['join_s']:.1f} s from `agent join` to its first routed "
              "request")
        print(f"kill mid-book: box SIGKILLed after {faults['killed_at']} requests; "
              f"{faults['missing']} of {faults['chunks']} chunks lost; "
              f"book finished in {faults['wall']:.1f} s")
        moved = switch(args, router_exe, work, max(int(n) for n in args.boxes.split(",")))
        idle = " / ".join(f"{s:.1f}" for s in moved["idle"])
        print(f"switch: {moved['boxes']} boxes to {OTHER_MODEL} after a book ({moved['states']}); "
              "placing took "
              f"{moved['switch_s']:.1f} s; idle per box {idle} s (boot {args.boot:g} s, bar boot + 10 s = "
              f"{args.boot + 10:g} s); {moved['missing']} chunks of the second book lost")
    return 0


if __name__ == "__main__":
    sys.exit(main())
