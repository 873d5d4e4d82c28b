"""A real chat-completions server on 127.0.0.1, for tests and benchmarks of ``llm_judge``.

Each request's behaviour is written in its own user message, so every sample
of a batch can carry a different fault. Directives (space-separated):
``score=N`` reply "... Score: N"; ``say=TEXT`` reply TEXT (underscores are
spaces); ``slow=S`` wait S seconds first; ``fail=CODExK`` answer HTTP CODE to
the first K requests carrying this message; ``malformed`` send invalid JSON;
``nochoices`` send a completion without choices; ``drip=S`` send the reply
one byte every S seconds; ``redirect=URL`` answer the first request carrying
this message with a 307 to URL (the rest as usual). The server answers at most
``max_requests`` requests (then 503) and stops itself after ``lifetime_s``.

    with ChatServer(latency_s=0.05) as server:   # every reply takes 50 ms
        ...  # llm_judge with base_url=server.base_url
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

# "key=value"; a key starts a word, so a long word without "=" is tried once, not from each of its
# characters (a megabyte of "x" took the server quadratic time, holding the GIL of the process
# that scores against it).
_DIRECTIVE = re.compile(r"(?<!\w)(\w+)=(\S+)")


class ChatServer:
    """The server's address and what it saw: (monotonic time, messages) per request."""

    def __init__(self, max_requests: int = 2000, lifetime_s: float = 120.0, latency_s: float = 0.0) -> None:
        self.requests: list[tuple[float, list[dict[str, Any]]]] = []
        self.max_requests = max_requests
        self.latency_s = latency_s
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._stopped = False
        self._httpd = _Server(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._stopper = threading.Timer(lifetime_s, self.stop)
        self._stopper.daemon = True

    @property
    def base_url(self) -> str:
        """The API root to give ``llm_judge`` (``http://127.0.0.1:PORT/v1``)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> ChatServer:
        """Serve on a background thread until :meth:`stop` or ``lifetime_s``."""
        self._thread.start()
        self._stopper.start()
        return self

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving and close the socket (idempotent)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        self._stopper.cancel()
        if self._thread.is_alive():
            self._httpd.shutdown()
        self._httpd.server_close()

    def count(self, message: str) -> int:
        """How many requests carried ``message``."""
        return sum(1 for _, messages in self.requests if messages[-1]["content"] == message)

    def reply_for(self, body: dict[str, Any]) -> tuple[int, bytes, float]:
        """(HTTP status, body, delay) for one request, following its directives."""
        messages = body["messages"]
        text = messages[-1]["content"]
        with self._lock:
            self.requests.append((time.monotonic(), messages))
            over = len(self.requests) > self.max_requests
            self._seen[text] += 1
            attempt = self._seen[text]
        if over:
            return 503, b'{"error": {"message": "test server request budget spent"}}', 0.0
        directives = dict(_DIRECTIVE.findall(text))
        delay = float(directives.get("slow", self.latency_s))
        if "redirect" in directives and attempt == 1:
            return 307, directives["redirect"].encode(), delay
        if "fail" in directives:
            code, times = directives["fail"].split("x")
            if attempt <= int(times):
                return int(code), json.dumps({"error": {"message": f"injected {code}"}}).encode(), delay
        if "malformed" in text.split():
            return 200, b'{"id": "x", "choices": [', delay
        if "nochoices" in text.split():
            return 200, json.dumps({"id": "x", "object": "chat.completion", "created": 0,
                                    "model": body["model"]}).encode(), delay
        content = (directives["say"].replace("_", " ") if "say" in directives
                   else f"Looks fine to me. Score: {directives.get('score', '5')}")
        completion = {
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        return 200, json.dumps(completion).encode(), delay


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # many clients connect at once (the stdlib's 5 drops them)


def _handler(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # else headers and body wait on a delayed ACK (~40 ms)

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length))
            if not self.path.endswith("/chat/completions"):
                status, payload, delay = 404, b'{"error": {"message": "not found"}}', 0.0
            else:
                status, payload, delay = server.reply_for(body)
            if delay:
                time.sleep(delay)
            drip = re.search(r"drip=(\S+)", json.dumps(body.get("messages", [])))
            try:
                self.send_response(status)
                if status == 307:
                    self.send_header("location", payload.decode())
                    payload = b""
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self._write(payload, float(drip[1].rstrip('"')) if drip else 0.0)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout)
                pass

        def _write(self, payload: bytes, every_s: float) -> None:
            if not every_s:
                self.wfile.write(payload)
                return
            for i in range(len(payload)):  # a byte at a time: each read gets something
                self.wfile.write(payload[i : i + 1])
                self.wfile.flush()
                time.sleep(every_s)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler
