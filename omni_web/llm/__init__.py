"""An OpenAI-compatible chat endpoint (SGLang, vLLM, llama.cpp's server, Ollama, a hosted API).

Used only to label a cast's quotes; the book's text never comes back from it.
"""

from omni_web.llm.chat import ChatAnswer, ChatClient, LlmUsage, chat_url

__all__ = ["ChatAnswer", "ChatClient", "LlmUsage", "chat_url"]
