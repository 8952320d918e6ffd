"""A fake OpenAI-compatible chat endpoint on a free loopback port, over real HTTP.

It answers ``POST /v1/chat/completions`` as vLLM, SGLang or llama.cpp's server do: a chat
completion with ``choices[0].message.content`` and ``usage`` token counts (here: words, roughly),
and refuses a bad key with 401 and an OpenAI error envelope. What the "model" says is the test's
``answer(user_message) -> str``, so a test can play a good labeller, a chatty one that wraps
its JSON in prose, a broken one, or one that never answers (``hold``: the request waits until
the test releases it, so a client timeout is exercised without a fixed sleep).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeChat:
    """The endpoint's behaviour and what it was sent."""

    answer: Callable[[str], str]
    api_key: str = ""
    refuse_response_format: bool = False  # an old server that 400s on the field
    hold: threading.Event | None = None  # set: requests wait for it before answering
    received: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reply(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.received.append(body)
            self.headers.append(headers)
        if self.api_key and headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, {"error": {"message": "Invalid API key", "type": "invalid_request_error"}}
        if self.refuse_response_format and "response_format" in body:
            return 400, {"error": {"message": "Unknown field: response_format", "type": "BadRequestError"}}
        if self.hold is not None:
            self.hold.wait(60)
        user = next((m["content"] for m in body.get("messages", []) if m.get("role") == "user"), "")
        content = self.answer(user)
        prompt_words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        return 200, {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": body.get("model") or "fake-llm",
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
            ],
            "usage": {
                "prompt_tokens": prompt_words,
                "completion_tokens": len(content.split()),
                "total_tokens": prompt_words + len(content.split()),
            },
        }


def asked_quotes(user: str) -> list[int]:
    """The quote numbers a labelling prompt asks about."""
    match = re.search(r"Label these quotes: ([\d, ]+)", user)
    return [int(n) for n in match.group(1).split(",")] if match else []


def alias_groups(user: str, *groups: tuple[str, ...]) -> str:
    """An alias answer naming ``groups`` of characters (by name) as one person each, by the ids
    the prompt gives them ("C3: Footman; ..."); a name the prompt does not list is left out."""
    ids = dict((name, f"C{n}") for n, name in re.findall(r"^C(\d+): ([^;\n]+)", user, flags=re.M))
    return json.dumps({"same": [[ids[name] for name in group if name in ids] for group in groups]})


def labels_answer(
    speaker: str = "C1", delivery: str = "neutral", confidence: float = 0.9
) -> Callable[[str], str]:
    """A labeller that names ``speaker`` for every asked quote."""

    def answer(user: str) -> str:
        labels = [
            {"quote": n, "speaker": speaker, "confidence": confidence, "delivery": delivery}
            for n in asked_quotes(user)
        ]
        return json.dumps({"labels": labels})

    return answer


class _Handler(BaseHTTPRequestHandler):
    fake: FakeChat

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") != "/v1/chat/completions":
            status, doc = 404, {"error": {"message": f"no route {self.path}"}}
        else:
            try:
                body = json.loads(raw)
            except ValueError:
                status, doc = 400, {"error": {"message": "body is not JSON"}}
            else:
                status, doc = self.fake.reply(body, {k.lower(): v for k, v in self.headers.items()})
        data = json.dumps(doc).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            return  # the client gave up (a timeout test)

    def log_message(self, *args: object) -> None:
        return


@contextmanager
def serve_fake_chat(fake: FakeChat) -> Iterator[str]:
    """The fake on a free loopback port; yields its base URL and stops it (and any held request) after."""
    handler = type("Handler", (_Handler,), {"fake": fake})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        if fake.hold is not None:
            fake.hold.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)
