"""A scripted stand-in for the Ocelog API on a standard-library http.server: it answers a scripted
sequence of steps (a status with headers and body, a dropped connection, a stall), then by default
accepts everything, and records every request it got with its arrival time (time.monotonic()).
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Union
from urllib.parse import parse_qsl, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: List[tuple]
    headers: Dict[str, str]
    body: Any
    at: float


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: Dict[str, str] = field(default_factory=dict)


class Drop:
    """Close the connection without an answer."""


@dataclass
class Stall:
    """Answer nothing for `seconds` (so the client times out), then drop the connection."""

    seconds: float


Step = Union[Reply, Drop, Stall, Callable[[Request], Union[Reply, Drop, Stall]]]


def problem(status: int, detail: str, errors: Optional[List[Dict[str, str]]] = None, headers: Optional[Dict[str, str]] = None) -> Reply:
    body: Dict[str, Any] = {"type": "urn:ocelog:problem:test", "title": "Scripted", "status": status, "detail": detail, "request_id": "req-1"}
    if errors is not None:
        body["errors"] = errors
    return Reply(status, body, {"Content-Type": "application/problem+json", **(headers or {})})


def accept_all(request: Request) -> Reply:
    """What the real service answers when every item is valid."""
    body = request.body if isinstance(request.body, dict) else {}
    if request.path == "/v1/event/batch":
        n = len(body.get("events", []))
        return Reply(200, {"success": True, "processed": n, "failed": 0, "duplicates": 0, "event_ids": [str(uuid.uuid4()) for _ in range(n)], "errors": [], "error_details": []})
    if request.path == "/v1/object/batch":
        objs = body.get("objects", [])
        results = [{"object_id": str(uuid.uuid4()), "object_type": o.get("type"), "external_id": o.get("id"), "created": True} for o in objs]
        return Reply(200, {"success": True, "processed": len(objs), "failed": 0, "duplicates": 0, "objects": results, "errors": [], "error_details": []})
    if request.path == "/v1/event":
        return Reply(200, {"success": True, "event_id": str(uuid.uuid4()), "event_type": body.get("event"), "timestamp": "2024-01-01T00:00:00.000Z", "objects_count": 1, "message": "ok"})
    if request.path == "/v1/object/upsert":
        return Reply(200, {"success": True, "object_id": str(uuid.uuid4()), "object_type": body.get("type"), "external_id": body.get("id"), "created": True})
    if request.path == "/v1/health":
        return Reply(200, {"status": "ok", "dataset_id": "d1", "dataset_name": "n", "key_id": "k", "key_name": "t", "scopes": []})
    return problem(404, f"no route {request.path}")


class ScriptedServer:
    """``with ScriptedServer([steps...]) as server: server.url``; ``server.requests`` after."""

    def __init__(self, steps: Optional[List[Step]] = None, default: Callable[[Request], Union[Reply, Drop, Stall]] = accept_all) -> None:
        self.steps: List[Step] = list(steps or [])
        self.default = default
        self.requests: List[Request] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                parts = urlsplit(self.path)
                request = Request(self.command, parts.path, parse_qsl(parts.query), {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic())
                with outer._lock:
                    outer.requests.append(request)
                    step = outer.steps.pop(0) if outer.steps else outer.default
                if callable(step) and not isinstance(step, (Reply, Drop, Stall)):
                    step = step(request)
                if isinstance(step, Stall):
                    time.sleep(step.seconds)
                if isinstance(step, (Drop, Stall)):
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                assert isinstance(step, Reply)
                data = b"" if step.body is None else json.dumps(step.body).encode()
                self.send_response(step.status)
                headers = {"Content-Type": "application/json", **step.headers}
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = _handle
            do_POST = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> "ScriptedServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def paths(self) -> List[str]:
        return [r.path for r in self.requests]
