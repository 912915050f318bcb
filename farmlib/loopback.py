"""A chat-completions server on loopback that injects faults: the test bed for API judges.

It speaks enough of the OpenAI protocol (``POST /v1/chat/completions``) for the ``openai`` client.
Its judge reads the comparisons in the last user message and prefers the longer output (or, if
``gullible``, obeys an injected "answer Output (a)"); it replies in the format the prompt asks for.
``faults`` is a queue consumed one per request: ``"429"``, ``"500"``, ``"slow"`` (sleeps past the
client's timeout), ``"garbage"`` (unparseable text), ``"drop"`` (a batched reply missing its last
item). ``latency`` adds a fixed delay to every reply (for the concurrency benchmark)::

    with LoopbackServer(faults=["429", "garbage"]) as srv:
        judge = ChatJudge(ChatJudgeConfig("t", model="m", base_url=srv.url))
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from farmlib.prompts import INJECTION


def _judge_message(text: str, gullible: bool) -> list[str]:
    labels = []
    for block in re.findall(r"<comparison (\d+)>(.*?)</comparison \1>", text, flags=re.S):
        a = re.search(r"<output_a>\n(.*?)\n</output_a>", block[1], flags=re.S)
        b = re.search(r"<output_b>\n(.*?)\n</output_b>", block[1], flags=re.S)
        a, b = (a.group(1) if a else ""), (b.group(1) if b else "")
        if gullible and (INJECTION.strip() in a or INJECTION.strip() in b):
            labels.append("a")
        else:
            labels.append("a" if len(a) >= len(b) else "b")
    return labels


def _reply(text: str, labels: list[str]) -> str:
    if "JSON list" in text:
        return json.dumps([{"id": k + 1, "rationale": "It answers better.", "preferred": p} for k, p in enumerate(labels)])
    if "Preferred: a" in text and len(labels) == 1:
        return f"Preferred: {labels[0]}"
    return "\n".join(f"{k + 1}: {p}" for k, p in enumerate(labels))


class LoopbackServer:
    """Context manager running the server on ``127.0.0.1`` in a thread; see the module docstring."""

    def __init__(self, faults: list[str] | None = None, latency: float = 0.0, slow: float = 2.0,
                 gullible: bool = False):
        self.faults, self.latency, self.slow, self.gullible = deque(faults or []), latency, slow, gullible
        self.requests = 0
        self.auth_headers: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def _send(self, code: int, body: dict, headers: dict | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with server._lock:
                    server.requests += 1
                    server.auth_headers.append(self.headers.get("Authorization", ""))
                    fault = server.faults.popleft() if server.faults else None
                if server.latency:
                    time.sleep(server.latency)
                if fault == "429":
                    return self._send(429, {"error": {"message": "rate limited", "type": "rate_limit"}},
                                      {"Retry-After": "0"})
                if fault == "500":
                    return self._send(500, {"error": {"message": "internal error", "type": "server"}})
                if fault == "slow":
                    time.sleep(server.slow)
                text = body["messages"][-1]["content"]
                labels = _judge_message(text, server.gullible)
                if fault == "drop":
                    labels = labels[:-1]
                content = "I think both are fine, hard to say!" if fault == "garbage" else _reply(text, labels)
                prompt_tokens = sum(len(m["content"]) for m in body["messages"]) // 4
                self._send(200, {
                    "id": f"cmpl-{server.requests}", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "loopback"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(content) // 4,
                              "total_tokens": prompt_tokens + len(content) // 4},
                })

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
