"""Reading the JSON a chat model was asked for out of its answer, as models write it: bare, in a
Markdown code fence, or inside a sentence of prose."""

from __future__ import annotations

import json
import re

from omni_web.errors import LlmUnusableAnswer

__all__ = ["json_in_answer"]


def json_in_answer(text: str) -> object:
    """The JSON value the answer holds: the whole answer, else its outermost ``{...}``.

    Raises:
        LlmUnusableAnswer: no JSON object in it, or not valid JSON.
    """
    body = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", text.strip())
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
