"""A chat-completions server on loopback that injects faults: the test bed for API judges.

It speaks enough of the OpenAI protocol (``POST /v1/chat/completions``) for the ``openai`` client.
Its judge reads the comparisons in the last user message and prefers the longer output (or, if
``gullible``, obeys an injected "answer Output (a)"); it replies in the format the prompt asks for.

Faults:

* ``faults``: a queue consumed one per request: an HTTP status (``"429"``, ``"500"``, ``"503"``,
  ``"401"``...), ``"slow"`` (sleeps ``slow`` seconds, past the client's timeout), ``"garbage"``
  (unparseable text), ``"drop"`` (a batched reply missing its last item);
* ``fail_on``: ``{substring: fault}``, applied to *every* request whose last message contains the
  substring (a prompt that fails for good);
* ``api_key``: requests bearing another key get a 401;
* ``latency``: a fixed service time added to every reply;
* ``slots``: at most that many requests are served at once; the others wait in line (FIFO), as
  on a single-GPU server. A request whose client gave up is still served (its slot time is spent);
* ``capacity``: a request arriving while that many are inside gets an immediate 429, as from a
  provider's concurrency limit (``rejected`` counts them).

::

    with LoopbackServer(faults=["429", "garbage"]) as srv:
        judge = ChatJudge(ChatJudgeConfig("t", model="m", base_url=srv.url))
    with LoopbackServer(slots=1, latency=0.3) as srv: ...   # one slow slot
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from farmlib.annotators.prompts import INJECTION


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


_ERRORS = {400: "This model's maximum context length is 8192 tokens", 401: "Incorrect API key provided: {key}",
           404: "The model `{model}` does not exist",
           429: "Rate limit reached", 503: "Server overloaded"}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the listen backlog: a burst of clients waits in line, not refused


class LoopbackServer:
    """Context manager running the server on ``127.0.0.1`` in a thread; see the module docstring."""

    def __init__(self, faults: list[str | None] | None = None, latency: float = 0.0, slow: float = 2.0,
                 gullible: bool = False, slots: int | None = None, fail_on: dict[str, str] | None = None,
                 api_key: str | None = None, capacity: int | None = None):
        self.faults, self.latency, self.slow, self.gullible = deque(faults or []), latency, slow, gullible
        self.slots, self.fail_on, self.api_key, self.capacity = slots, dict(fail_on or {}), api_key, capacity
        self.requests = self.rejected = 0
        self.peak = 0  # most requests inside the server at once (served and waiting)
        self.auth_headers: list[str] = []
        self.prompts: list[str] = []  # the last message of each request, in arrival order
        self._lock = threading.Lock()
        self._line: deque[int] = deque()  # tickets waiting for a slot, FIFO
        self._serving = self._inside = 0
        self._tickets = itertools.count()
        self._slot_free = threading.Condition(self._lock)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def _send(self, code: int, body: dict, headers: dict | None = None) -> None:
                data = json.dumps(body).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (timed out) before the reply
                    pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                text = body["messages"][-1]["content"]
                with server._lock:
                    server.requests += 1
                    auth = self.headers.get("Authorization", "")
                    server.auth_headers.append(auth)
                    server.prompts.append(text)
                    fault = server.faults.popleft() if server.faults else None
                    fault = next((f for s, f in server.fail_on.items() if s in text), fault)
                    if server.api_key is not None and auth != f"Bearer {server.api_key}":
                        fault = "401"
                    over = server.capacity is not None and server._inside >= server.capacity
                    if over:
                        server.rejected += 1
                    else:
                        server._inside += 1
                        server.peak = max(server.peak, server._inside)
                if over:
                    return self._send(429, {"error": {"message": _ERRORS[429], "type": "loopback", "code": 429}},
                                      {"Retry-After": "0"})
                server._take_slot()
                try:
                    self._serve(body, text, fault)
                finally:
                    server._give_slot()

            def _serve(self, body: dict, text: str, fault: str | None) -> None:
                if server.latency:
                    time.sleep(server.latency)
                if fault and fault.isdigit():
                    code = int(fault)
                    msg = _ERRORS.get(code, "internal error").format(
                        key=self.headers.get("Authorization", "").removeprefix("Bearer "), model=body.get("model"))
                    return self._send(code, {"error": {"message": msg, "type": "loopback", "code": code}},
                                      {"Retry-After": "0"} if code == 429 else None)
                if fault == "slow":
                    time.sleep(server.slow)
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

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)  # quick shutdown

    def _take_slot(self) -> None:
        with self._slot_free:
            if self.slots is None:
                return
            ticket = next(self._tickets)
            self._line.append(ticket)
            while self._line[0] != ticket or self._serving >= self.slots:
                self._slot_free.wait()
            self._line.popleft()
            self._serving += 1
            self._slot_free.notify_all()  # the next in line may fit in another free slot

    def _give_slot(self) -> None:
        with self._slot_free:
            self._inside -= 1
            if self.slots is not None:
                self._serving -= 1
                self._slot_free.notify_all()

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
