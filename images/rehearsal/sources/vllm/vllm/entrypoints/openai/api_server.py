"""The OpenAI-compatible server of the stand-in: /health, /version, /v1/models.

The standard library's HTTP server, on (host, port) as `vllm serve` names them
(no host: every interface, as vLLM binds); SIGTERM stops it cleanly, as it
stops vLLM's in a container.
"""

import json
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from vllm.config import VllmConfig
from vllm.version import __version__


def make_handler(config: VllmConfig, connector: Any) -> type[BaseHTTPRequestHandler]:
    model = config.model_config
    name = model.served_model_name or model.model
    created = int(time.time())

    class Handler(BaseHTTPRequestHandler):
        server_version = "vllm"

        def send_json(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/health":
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif self.path == "/version":
                self.send_json(200, {"version": __version__})
            elif self.path == "/v1/models":
                card = {
                    "id": name,
                    "object": "model",
                    "created": created,
                    "owned_by": "vllm",
                    "root": model.model,
                    "parent": None,
                    "max_model_len": model.max_model_len,
                }
                self.send_json(200, {"object": "list", "data": [card]})
            else:
                self.send_json(404, {"detail": "Not Found"})

        def log_message(self, format: str, *args: Any) -> None:
            print(f"INFO: {self.address_string()} - {format % args}", flush=True)

    return Handler


def run_server(config: VllmConfig, host: str | None, port: int, connector: Any = None) -> int:
    server = ThreadingHTTPServer((host or "", port), make_handler(config, connector))
    server.daemon_threads = True

    def stop(signum: int, frame: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    print(f"INFO: Starting vLLM API server on http://{host or '0.0.0.0'}:{port}", flush=True)
    print("INFO: Application startup complete.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    print("INFO: Shutting down", flush=True)
    return 0
