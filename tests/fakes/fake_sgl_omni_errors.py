"""The fake server's one error type, shaped like sglang-omni's ``SpeechAPIError`` (API doc 2.7)."""

from __future__ import annotations

__all__ = ["ApiError", "bad_request", "internal_error", "service_unavailable"]


class ApiError(Exception):
    """An HTTP error the fake answers in the OpenAI envelope."""

    def __init__(
        self, message: str, *, status: int, error_type: str, param: str | None, code: int | None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.error_type = error_type
        self.param = param
        self.code = code

    def payload(self) -> dict[str, dict[str, object]]:
        """``{"error": {"message", "type", "param", "code"}}``."""
        return {
            "error": {
                "message": self.message,
                "type": self.error_type,
                "param": self.param,
                "code": self.code,
            }
        }


def bad_request(message: str, *, param: str | None = None) -> ApiError:
    """400 ``BadRequestError`` with code 400: a caller mistake."""
    return ApiError(message, status=400, error_type="BadRequestError", param=param, code=400)


def internal_error(message: str, *, param: str | None = None) -> ApiError:
    """500 ``server_error`` with code null: what the pipeline raised, as text."""
    return ApiError(message, status=500, error_type="server_error", param=param, code=None)


def service_unavailable(message: str, *, param: str | None = None) -> ApiError:
    """503 ``server_error`` with code null: queue full or a missing encoder."""
    return ApiError(message, status=503, error_type="server_error", param=param, code=None)
