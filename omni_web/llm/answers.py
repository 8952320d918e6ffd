"""Reading the JSON a chat model was asked for out of its answer, as models write it: bare, in a
Markdown code fence, inside a sentence of prose, or after the reasoning a thinking model writes
into its answer when the server does not split it off (Qwen3 or DeepSeek-R1 served without a
reasoning parser)."""

from __future__ import annotations

import json
import re

from omni_web.errors import LlmUnusableAnswer

__all__ = ["json_in_answer"]

_REASONING_END = "</think>"


def json_in_answer(text: str) -> object:
    """The JSON value the answer holds: the whole answer, else its outermost ``{...}``, read after
    any ``<think>…</think>`` reasoning, whose drafts may hold braces of their own.

    Raises:
        LlmUnusableAnswer: no JSON object in it, or not valid JSON.
    """
    reply = text.strip()
    if _REASONING_END in reply:
        # Some chat templates open the reasoning in the prompt, so only its end is in the answer.
        reply = reply.rsplit(_REASONING_END, 1)[1].strip()
    elif reply.startswith("<think>"):
        raise LlmUnusableAnswer(
            "The LLM's answer is all reasoning, cut off before any JSON. Turn the model's thinking off "
            "(or start its server with a reasoning parser), or give it more tokens."
        )
    body = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", reply)
    try:
        return json.loads(body)
    except ValueError:
        start, end = body.find("{"), body.rfind("}")
        if start < 0 or end <= start:
            raise LlmUnusableAnswer("The LLM's answer holds no JSON object.") from None
        try:
            return json.loads(body[start : end + 1])
        except ValueError as exc:
            raise LlmUnusableAnswer(f"The LLM's answer is not valid JSON ({exc}).") from exc
