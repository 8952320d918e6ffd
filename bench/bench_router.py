"""Benchmark: a book rendered through the REAL SGLang-Omni router in front of N fake workers.

For N = 1, 2, 4 workers with B slots each and a fixed generation latency L, C chunks are rendered
by omni-web's renderer with the concurrency a server group uses (sum over routable workers of
B + 1, read from the router's /health by GroupCapacity). The ideal time is ceil(C / (N*B)) * L;
efficiency = ideal / measured (target >= 0.9). The share of requests each worker got comes from
the router's own counters (routed_requests in /health).

    .venv/bin/python bench/bench_router.py [--chunks 240] [--slots 4] [--latency 1.0] [--workers 1,2,4]

The router is `sgl-omni-router-py` from the sglang-omni 0.1.9 wheel in the contract venv
(tests/contract/setup_env.py builds it once). Every process is started here and stopped by its
own pid. Not a test: it prints numbers.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_throughput import MODEL, generated_items  # noqa: E402

from omni_web.catalog import get_entry  # noqa: E402
from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice  # noqa: E402
from omni_web.client.inflight import InFlightController  # noqa: E402
from omni_web.render import RenderItem, render_chunks  # noqa: E402
from omni_web.server.capacity import GroupCapacity  # noqa: E402
from omni_web.server.group import router_argv  # noqa: E402
from omni_web.server.router import read_router_health, warm_voice_registry  # noqa: E402
from tests.contract.setup_env import ensure_contract_venv  # noqa: E402
from tests.fakes.sgl_omni import free_port, install_router, start_fake_server  # noqa: E402


def start_router(router: Path, urls: list[str], work: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    argv = router_argv(router, host="127.0.0.1", port=port, worker_urls=urls, state_dir=work / "router-state")
    argv += ["--log-level", "warning"]  # one line per request at info would cost CPU here
    log = (work / f"router-{port}.log").open("wb")
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)  # noqa: S603
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        health = read_router_health(base, timeout_s=2)
        if health is not None and health.all_routable and health.total_workers == len(urls):
            warm_voice_registry(base)
            return process, base
        if process.poll() is not None:
            raise SystemExit(f"router exited: {(work / f'router-{port}.log').read_text()[-2000:]}")
        time.sleep(0.2)
    raise SystemExit("router never saw every worker routable")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def run(n_workers: int, chunks: int, slots: int, latency_s: float, router: Path, work: Path) -> dict:
    env = {
        "FAKE_SGL_SLOTS": str(slots),
        "FAKE_SGL_LATENCY_S": str(latency_s),
        "FAKE_SGL_SECONDS_PER_WORD": "0.01",
    }
    logs = [work / f"requests-{n_workers}-{i}.jsonl" for i in range(n_workers)]
    workers = [
        start_fake_server(
            MODEL, env={**env, "FAKE_SGL_REQUEST_LOG": str(logs[i])}, log_path=work / f"w{n_workers}-{i}.log"
        )
        for i in range(n_workers)
    ]
    process = None
    try:
        process, base = start_router(router, [w.base_url for w in workers], work)
        capacity = GroupCapacity(base, slots)
        entry = get_entry(MODEL)
        voice = VoiceChoice.speaker("Vivian")
        items = generated_items(chunks, 20, salt=f"router-{n_workers}-{time.time()}")
        with SpeechClient(base, local_server=False) as client:

            def synthesize(item: RenderItem) -> bytes:
                return client.speech(entry, SpeechRequest(text=item.text, voice=voice)).audio

            started = time.perf_counter()
            render_chunks(items, synthesize, cache_dir=work / f"chunks-{n_workers}", concurrency=capacity)
            wall = time.perf_counter() - started
        health = read_router_health(base)
        failed = sum(w.failed_requests for w in health.workers)
        # Speech requests each worker served, from its own request log (the router's routed_requests
        # also counts the voice-list reads that warm its registry).
        routed = [len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0 for log in logs]
        ideal = math.ceil(chunks / (n_workers * slots)) * latency_s
        return {
            "n": n_workers,
            "wall": wall,
            "ideal": ideal,
            "eff": ideal / wall,
            "routed": routed,
            "failed": failed,
            "in_flight": capacity(),
        }
    finally:
        if process is not None:
            stop(process)
        for worker in workers:
            worker.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=240)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--workers", default="1,2,4")
    args = parser.parse_args()
    venv = ensure_contract_venv()
    with tempfile.TemporaryDirectory(prefix="bench-router-") as tmp:
        work = Path(tmp)
        router = install_router(work / "venv", venv.python)
        print(
            f"real router: sglang-omni 0.1.9 ({venv.python}); C={args.chunks} chunks, B={args.slots} "
            "slots/worker, "
            f"L={args.latency:g} s; concurrency = sum over routable workers of (B + 1)"
        )
        print(
            f"{'N':>2} {'in flight':>9} {'ideal s':>8} {'wall s':>8} {'efficiency':>10}  speech requests per "
            "worker (share)   failed"
        )
        results = [
            run(int(n), args.chunks, args.slots, args.latency, router, work) for n in args.workers.split(",")
        ]
        for r in results:
            total = sum(r["routed"]) or 1
            shares = " / ".join(f"{c} ({c / total:.0%})" for c in r["routed"])
            flag = "ok" if r["eff"] >= 0.9 else "BELOW 0.9"
            print(
                f"{r['n']:>2} {r['in_flight']:>9} {r['ideal']:>8.2f} {r['wall']:>8.2f} {r['eff']:>10.3f}  "
                f"{shares:<36} {r['failed']:>4}  {flag}"
            )
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of the bench process: {peak_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())


def fill_behind_router(
    *, workers: int, width: int, latency_s: float, rounds: int, work: Path, fixed: int | None = None
) -> object:
    """bench_throughput's fill row behind the real router: ``workers`` fakes of ``width`` each, the
    URL given as a server we did not start (``convert --api-url <router>``), no --concurrency; with
    ``fixed``, that many in flight instead (the reference: what this machine's router can carry).

    Returns the row (a FillRun) or, without the contract venv, why it was skipped.
    """
    from bench_throughput import fill  # noqa: PLC0415 - bench_throughput imports this module lazily

    from omni_web.server.serving import ForeignServing  # noqa: PLC0415
    from omni_web.server.status import Endpoint  # noqa: PLC0415

    try:
        venv = ensure_contract_venv()
    except Exception as exc:  # noqa: BLE001 - a bench row says why it is missing instead of failing the bench
        return f"{'router, 2 x width 32':<28} skipped: the contract venv (the real router) is not available: {exc}"
    router = install_router(work / "router-venv", venv.python)  # idempotent: the second row reuses it
    env = {
        "FAKE_SGL_SLOTS": str(width),
        "FAKE_SGL_QUEUE_LIMIT": str(width),
        "FAKE_SGL_LATENCY_S": str(latency_s),
        "FAKE_SGL_SECONDS_PER_WORD": "0.1",
    }
    tag = "fixed" if fixed is not None else "found"
    fakes = [
        start_fake_server(MODEL, env=env, log_path=work / f"router-worker-{tag}-{i}.log")
        for i in range(workers)
    ]
    process = None
    try:
        process, base = start_router(router, [w.base_url for w in fakes], work)
        entry = get_entry(MODEL)
        endpoint = Endpoint(base_url=base, model_key=MODEL, model_id=MODEL, owned=False)
        controller = ForeignServing(endpoint, patience_s=60, batch=entry.default_concurrency).in_flight(
            entry.default_concurrency
        )
        label = f"router, {workers} x width {width}"
        if fixed is not None:
            controller, label = (
                InFlightController.fixed(fixed, margin=False),
                f"router, fixed {fixed} (reference)",
            )
        total = workers * width
        return fill(
            label,
            base,
            controller,
            width=total,
            chunks=rounds * total,
            latency_s=latency_s,
            work=work,
            local=False,
        )
    finally:
        if process is not None:
            stop(process)
        for fake in fakes:
            fake.stop()
