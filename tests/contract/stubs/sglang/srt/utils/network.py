"""Import stub: `NetworkAddress`, which `sglang_omni/serve/launcher.py` uses to build the URL the
server's warmup requests go to (`NetworkAddress(host, port).to_url()`)."""

__all__ = ["NetworkAddress"]


class NetworkAddress:
    def __init__(self, host, port):
        self.host = host
        self.port = port

    def to_url(self, scheme="http"):
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"
