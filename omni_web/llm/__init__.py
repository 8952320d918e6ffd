"""An OpenAI-compatible chat endpoint (SGLang, vLLM, llama.cpp's server, Ollama, a hosted API).

Used only for the cast (labels for quotes, personas, which names are one person); the book's
text never comes back from it.
"""

from omni_web.llm.answers import json_in_answer
from omni_web.llm.chat import ChatAnswer, ChatClient, LlmUsage, chat_url

__all__ = ["ChatAnswer", "ChatClient", "LlmUsage", "chat_url", "json_in_answer"]
