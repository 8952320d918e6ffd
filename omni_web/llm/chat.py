"""One chat endpoint: ``POST <base>/v1/chat/completions`` with httpx, a JSON answer asked for.

httpx errors are translated here, once, into :mod:`omni_web.errors` (``LlmUnreachable`` for
nothing answering or a timeout, ``LlmError`` for an HTTP error). The caller decides what a
failure means; the cast's labeller falls back to its rules.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx

from omni_web.errors import LlmError, LlmUnreachable, LlmUnusableAnswer, SettingsError, exception_detail
from omni_web.llm.answers import json_in_answer
from omni_web.settings import Settings

__all__ = ["ChatAnswer", "ChatClient", "LlmUsage", "chat_url"]

_PATH = "/v1/chat/completions"


def chat_url(url: str) -> str:
    """The completions URL for what a user typed: a server root, ``…/v1`` or the full path."""
    base = url.strip().rstrip("/")
    for tail in ("/chat/completions", "/v1"):
        if base.endswith(tail):
            base = base[: -len(tail)]
    return base + _PATH


@dataclass(frozen=True, slots=True)
class LlmUsage:
    """What the endpoint cost: requests sent, tokens in and out, seconds waited."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    failures: int = 0

    def plus(self, other: LlmUsage) -> LlmUsage:
        """Both counts added."""
        return LlmUsage(
            self.requests + other.requests,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.seconds + other.seconds,
            self.failures + other.failures,
        )

    @property
    def summary(self) -> str:
        """``3 requests, 4,210 tokens, 6.2 s`` (and the failures, when any)."""
        failed = f", {self.failures} failed" if self.failures else ""
        tokens = self.prompt_tokens + self.completion_tokens
        plural = "" if self.requests == 1 else "s"
        return f"{self.requests} request{plural}, {tokens:,} tokens, {self.seconds:.1f} s{failed}"


@dataclass(frozen=True, slots=True)
class ChatAnswer:
    """The assistant's text and what the request cost."""

    text: str
    model: str
    usage: LlmUsage


@dataclass(frozen=True, slots=True)
class ChatClient:
    """A chat endpoint as set in Settings. ``transport`` lets tests pass an ``httpx.MockTransport``."""

    url: str
    model: str = ""
    api_key: str = ""
    timeout_s: float = 120.0
    transport: httpx.BaseTransport | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> ChatClient:
        """The endpoint set in Settings.

        Raises:
            SettingsError: no endpoint is set.
        """
        if not settings.llm_url.strip():
            raise SettingsError("No LLM endpoint is set. Give its URL in Settings → LLM (e.g. "
                                "http://127.0.0.1:30000/v1 for a model served by SGLang).")
        return cls(settings.llm_url.strip(), settings.llm_model, settings.llm_api_key, settings.llm_timeout_s)

    def probe(self) -> str:
        """One tiny request, in words: who answered, how fast, at what cost (the Settings Test button).

        Raises:
            LlmError: as :meth:`complete`, or the answer is not the JSON asked for.
        """
        answer = self.complete('Answer with the JSON object {"ok": true} and nothing else.', "Are you there?")
        try:
            why = "" if json_in_answer(answer.text) == {"ok": True} else "wrong JSON"
        except LlmUnusableAnswer as exc:
            why = str(exc)
        if why:
            raise LlmUnusableAnswer(
                f"The model at {chat_url(self.url)} answered, but not with the JSON asked for "
                f"({answer.text[:80]!r}; {why}). "
                "Labels need a model that follows JSON instructions (an instruct model, 7B or larger).",
                url=chat_url(self.url),
            )
        who = answer.model or "The model"
        return f"{who} answered in {answer.usage.seconds:.1f} s ({answer.usage.summary})."

    def complete(self, system: str, user: str, *, json_answer: bool = True) -> ChatAnswer:
        """Send one system + user message pair; the answer's text and cost.

        ``json_answer`` asks for a JSON object (``response_format``); an endpoint that refuses
        the field (HTTP 400 or 422) is asked once more without it.

        Raises:
            LlmUnreachable: nothing answered, or not within ``timeout_s``.
            LlmError: the endpoint answered with an HTTP error.
            LlmUnusableAnswer: the answer is not a chat completion.
        """
        body: dict[str, Any] = {
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": 0,
        }
        if self.model.strip():
            body["model"] = self.model.strip()
        if json_answer:
            body["response_format"] = {"type": "json_object"}
        started = time.monotonic()
        response = self._post(body)
        if json_answer and response.status_code in (400, 422) and "response_format" in response.text:
            body.pop("response_format")
            response = self._post(body)
        seconds = time.monotonic() - started
        if response.status_code >= 400:
            raise LlmError(self._refusal(response), url=chat_url(self.url), status=response.status_code)
        return self._answer(response, seconds)

    def _post(self, body: dict[str, Any]) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.api_key.strip()}"} if self.api_key.strip() else {}
        url = chat_url(self.url)
        try:
            with httpx.Client(timeout=self.timeout_s, transport=self.transport) as client:
                return client.post(url, json=body, headers=headers)
        except httpx.TimeoutException as exc:
            raise LlmUnreachable(
                f"The chat endpoint {url} did not answer within {self.timeout_s:.0f} s. Check that the "
                "model is loaded, or raise the timeout.",
                url=url,
            ) from exc
        except httpx.HTTPError as exc:
            raise LlmUnreachable(
                f"Cannot reach the chat endpoint {url} ({exception_detail(exc)}). Check the URL in Settings "
                "and that the server is running.",
                url=url,
            ) from exc

    def _refusal(self, response: httpx.Response) -> str:
        detail = _error_message(response) or response.text.strip()[:300]
        hint = {
            401: "Check the API key in Settings.",
            403: "Check the API key in Settings.",
            404: "Check the URL and the model name in Settings.",
        }.get(response.status_code, "")
        return f"The chat endpoint answered HTTP {response.status_code}: {detail}. {hint}".strip()

    def _answer(self, response: httpx.Response, seconds: float) -> ChatAnswer:
        try:
            data = response.json()
            text = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LlmUnusableAnswer(
                f"The chat endpoint {chat_url(self.url)} answered, but not with a chat completion "
                f"({exception_detail(exc)}). Is it an OpenAI-compatible /v1/chat/completions?",
                url=chat_url(self.url),
            ) from exc
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return ChatAnswer(
            text=str(text or ""),
            model=str(data.get("model") or self.model),
            usage=LlmUsage(
                1, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0), seconds
            ),
        )


def _error_message(response: httpx.Response) -> str:
    """The OpenAI envelope's ``error.message`` (or ``error`` as text); "" when the body is not one."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return ""
    return str((error.get("message") if isinstance(error, dict) else error) or "")
