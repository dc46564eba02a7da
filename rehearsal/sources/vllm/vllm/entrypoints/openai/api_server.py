"""The OpenAI-compatible server of the stand-in: /health, /version, /v1/models and
POST /v1/completions (vllm.model_executor.echo generates: a Triton kernel per request).

The standard library's HTTP server, on (host, port) as `vllm serve` names them
(no host: every interface, as vLLM binds); SIGTERM stops it cleanly, as it
stops vLLM's in a container.
"""

import json
import signal
import threading
import time
import traceback
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from vllm.config import VllmConfig
from vllm.model_executor.echo import generate
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

        def error(self, status: int, kind: str, message: str) -> None:
            body = {"error": {"message": message, "type": kind, "param": None, "code": status}}
            self.send_json(status, body)

        def do_POST(self) -> None:
            if self.path != "/v1/completions":
                self.send_json(404, {"detail": "Not Found"})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"null")
                if not isinstance(request, dict):
                    raise ValueError("the body is no JSON object")
            except ValueError as e:
                self.error(400, "BadRequestError", f"Invalid request: {e}")
                return
            if request.get("model", name) != name:
                self.error(404, "NotFoundError", f"The model `{request['model']}` does not exist.")
                return
            prompts = request.get("prompt")
            prompts = [prompts] if isinstance(prompts, str) else prompts
            max_tokens = request.get("max_tokens", 16)
            if not prompts or not all(isinstance(p, str) for p in prompts):
                self.error(400, "BadRequestError", "prompt must be a string or a list of strings")
                return
            if not isinstance(max_tokens, int) or max_tokens < 0:
                self.error(400, "BadRequestError", "max_tokens must be a non-negative integer")
                return
            choices, prompt_tokens, completion_tokens = [], 0, 0
            try:
                for index, prompt in enumerate(prompts):
                    n_prompt, n_new, text = generate(prompt, max_tokens)
                    if n_prompt + n_new > model.max_model_len:
                        raise ValueError(
                            f"This model's maximum context length is {model.max_model_len}"
                            f" tokens; the request asks for {n_prompt + n_new}."
                        )
                    prompt_tokens += n_prompt
                    completion_tokens += n_new
                    choice = {"index": index, "text": text, "logprobs": None}
                    choices.append(choice | {"finish_reason": "length", "stop_reason": None})
            except ValueError as e:
                self.error(400, "BadRequestError", str(e))
                return
            except Exception as e:  # the engine failed (e.g. Triton cannot build its launcher)
                traceback.print_exc()
                self.error(500, "InternalServerError", f"{type(e).__name__}: {e}")
                return
            self.send_json(
                200,
                {
                    "id": f"cmpl-{uuid.uuid4().hex}",
                    "object": "text_completion",
                    "created": int(time.time()),
                    "model": name,
                    "choices": choices,
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "total_tokens": prompt_tokens + completion_tokens,
                        "completion_tokens": completion_tokens,
                    },
                },
            )

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
