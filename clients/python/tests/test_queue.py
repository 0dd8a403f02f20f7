"""Queue and flush (enqueue_event, enqueue_object, flush, close), against a scripted http.server, and its
duplicates counter against the built service (conftest.py)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import uuid

import pytest

import ocelog
from scripted import Reply, ScriptedServer, accept_all, problem

SRC = str(Path(__file__).resolve().parent.parent / "src")
ORDER = [{"type": "order", "id": "o-1"}]


def wait_until(predicate, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


class Gate:
    """A scripted answer that holds the request until `release()`."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self._open = threading.Event()

    def __call__(self, request):
        self.entered.set()
        self._open.wait(30)
        return accept_all(request)

    def release(self) -> None:
        self._open.set()


def test_flush_sends_everything_enqueued_in_batches_of_100_in_order():
    with ScriptedServer() as server:
        client = ocelog.Client("k", server.url, flush_interval=60)
        for i in range(250):
            assert client.enqueue_event("tick", [{"type": "order", "id": f"o-{i}"}], timestamp="2024-05-01T10:00:00Z") is True
        assert client.flush() is True
        stats = client.stats()
        client.close()
    assert [len(r.body["events"]) for r in server.requests] == [100, 100, 50]
    assert [e["objects"][0]["id"] for r in server.requests for e in r.body["events"]] == [f"o-{i}" for i in range(250)]
    assert (stats.enqueued, stats.recorded, stats.failed, stats.queued) == (250, 250, 0, 0)


def test_events_and_objects_go_to_their_own_batch_endpoints():
    with ScriptedServer() as server:
        client = ocelog.Client("k", server.url, flush_interval=60)
        client.enqueue_object("order", "o-1", {"status": "new"})
        client.enqueue_event("place order", ORDER, properties={"channel": "web"})
        client.enqueue_object("order", "o-1", {"status": "paid"})
        client.flush()
        client.close()
    assert server.paths() == ["/v1/object/batch", "/v1/event/batch"]
    assert [o["properties"]["status"] for o in server.requests[0].body["objects"]] == ["new", "paid"]
    [event] = server.requests[1].body["events"]
    key = event.pop("idempotency_key")
    assert event == {"event": "place order", "objects": ORDER, "properties": {"channel": "web"}}
    assert uuid.UUID(key).version == 4
    object_keys = [o["idempotency_key"] for o in server.requests[0].body["objects"]]
    assert len(set(object_keys + [key])) == 3


def test_every_item_keeps_its_idempotency_key_across_retries_and_a_given_key_is_sent_as_is():
    with ScriptedServer([problem(503, "log down")]) as server:
        client = ocelog.Client("k", server.url, backoff_base=0.01, backoff_max=0.02)
        client.send_events([{"event": "pay", "objects": ORDER}, {"event": "pay", "objects": ORDER, "idempotency_key": "mine-1"}])
        client.send_event("ship", ORDER, idempotency_key="mine-2")
        client.close()
    sent = [[e["idempotency_key"] for e in r.body["events"]] for r in server.requests if r.path == "/v1/event/batch"]
    assert len(sent) == 2 and sent[0] == sent[1]
    assert sent[0][1] == "mine-1" and uuid.UUID(sent[0][0]).version == 4
    assert [r.body["idempotency_key"] for r in server.requests if r.path == "/v1/event"] == ["mine-2"]


def test_the_background_thread_sends_after_flush_interval_without_a_flush():
    with ScriptedServer() as server:
        client = ocelog.Client("k", server.url, flush_interval=0.05)
        client.enqueue_event("tick", ORDER)
        assert wait_until(lambda: client.stats().recorded == 1)
        client.close()
    assert len(server.requests) == 1


def test_the_background_thread_sends_at_flush_at_items_without_a_flush():
    with ScriptedServer() as server:
        client = ocelog.Client("k", server.url, flush_interval=3600, flush_at=10)
        for _ in range(10):
            client.enqueue_event("tick", ORDER)
        assert wait_until(lambda: client.stats().recorded == 10)
        client.close()
    assert [len(r.body["events"]) for r in server.requests] == [10]


def test_a_full_queue_drops_and_counts_when_asked():
    gate = Gate()
    failures = []
    with ScriptedServer([gate]) as server:
        client = ocelog.Client("k", server.url, flush_at=1, flush_interval=60, max_queue_size=2, when_full="drop", on_error=failures.append)
        assert client.enqueue_event("a", ORDER)
        assert gate.entered.wait(10)  # "a" is in flight; the queue is empty
        assert client.enqueue_event("b", ORDER) and client.enqueue_event("c", ORDER)
        assert client.enqueue_event("d", ORDER) is False
        gate.release()
        assert client.flush()
        stats = client.stats()
        client.close()
    assert [e["event"] for r in server.requests for e in r.body["events"]] == ["a", "b", "c"]
    assert (stats.enqueued, stats.recorded, stats.dropped) == (3, 3, 1)
    assert [(f.kind, f.index, f.item["event"]) for f in failures] == [("dropped", -1, "d")]


def test_a_full_queue_blocks_by_default_and_loses_nothing():
    gate = Gate()
    with ScriptedServer([gate]) as server:
        client = ocelog.Client("k", server.url, flush_at=1, flush_interval=60, max_queue_size=2)
        client.enqueue_event("e0", ORDER)
        assert gate.entered.wait(10)
        producer = threading.Thread(target=lambda: [client.enqueue_event(f"e{i}", ORDER) for i in range(1, 6)])
        producer.start()
        assert wait_until(lambda: client.stats().enqueued == 3)  # e1, e2 fill the queue; e3 waits for room
        assert producer.is_alive()
        gate.release()
        producer.join(10)
        assert client.flush()
        stats = client.stats()
        client.close()
    assert [e["event"] for r in server.requests for e in r.body["events"]] == [f"e{i}" for i in range(6)]
    assert (stats.enqueued, stats.recorded, stats.dropped) == (6, 6, 0)


def test_failures_go_to_on_error_and_to_the_log(caplog):
    def reject_second(request):
        detail = {"index": 1, "path": "/objects", "message": "must have at least 1 item"}
        return Reply(200, {"success": False, "processed": 1, "failed": 1, "event_ids": ["id-0"], "errors": ["Event 1: /objects: must have at least 1 item"], "error_details": [detail]})

    failures = []
    with ScriptedServer([reject_second]) as server, caplog.at_level(logging.ERROR, logger="ocelog"):
        client = ocelog.Client("k", server.url, flush_interval=60, on_error=failures.append)
        client.enqueue_event("ok", ORDER)
        client.enqueue_event("bad", [])
        client.flush()
        client.close()
    assert [(f.index, f.path, f.kind, f.endpoint) for f in failures] == [(1, "/objects", "rejected", "event")]
    assert client.stats().failed == 1
    assert any("not recorded (rejected)" in r.getMessage() and r.levelno == logging.ERROR for r in caplog.records)


def test_flush_waits_out_a_429_and_a_503():
    with ScriptedServer([problem(429, "slow down", headers={"Retry-After": "1"}), problem(503, "log down")]) as server:
        client = ocelog.Client("k", server.url, flush_interval=60, backoff_base=0.01)
        for _ in range(5):
            client.enqueue_event("tick", ORDER)
        assert client.flush()
        stats = client.stats()
        client.close()
    assert (stats.recorded, stats.rate_limited, stats.retries) == (5, 1, 2)


def test_close_flushes_and_later_enqueues_raise():
    with ScriptedServer() as server:
        with ocelog.Client("k", server.url, flush_interval=60) as client:
            client.enqueue_object("order", "o-1")
        assert client.stats().recorded == 1
        with pytest.raises(RuntimeError, match="closed"):
            client.enqueue_object("order", "o-2")
        assert client.close() is True
    assert len(server.requests) == 1


def test_a_naive_datetime_is_refused_at_enqueue():
    from datetime import datetime

    client = ocelog.Client("k", "http://127.0.0.1:9")
    with pytest.raises(ValueError, match="naive datetime"):
        client.enqueue_event("tick", ORDER, timestamp=datetime(2024, 5, 1))
    assert client.stats().enqueued == 0


def test_interpreter_exit_flushes_the_queue():
    script = "\n".join(
        [
            "import sys, ocelog",
            "client = ocelog.Client('k', sys.argv[1], flush_interval=3600)",
            "for i in range(150):",
            "    client.enqueue_event('tick', [{'type': 'order', 'id': str(i)}])",
            "# no flush, no close: atexit sends them",
        ]
    )
    with ScriptedServer() as server:
        done = subprocess.run([sys.executable, "-c", script, server.url], env={**os.environ, "PYTHONPATH": SRC}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert sum(len(r.body["events"]) for r in server.requests) == 150


def test_items_enqueued_again_under_their_keys_count_as_duplicates_among_the_recorded(service, key):
    """Against the built service (conftest.py): a backlog enqueued twice, as a sender re-sends it after a crash."""

    def enqueue_backlog(client):
        for i in range(150):
            client.enqueue_event("tick", [{"type": "sensor", "id": f"s-{i % 7}"}], timestamp="2024-05-01T10:00:00Z", properties={"seq": i}, idempotency_key=f"backlog-{i}")
        for i in range(2):
            client.enqueue_object("customer", f"c-{i}", {"tier": "gold"}, idempotency_key=f"object-{i}")

    failures = []
    with ocelog.Client(key["key"], service.url, flush_interval=60, on_error=failures.append) as client:
        enqueue_backlog(client)
        assert client.flush() is True
        first = client.stats()
        enqueue_backlog(client)
        for i in range(150, 170):
            client.enqueue_event("tick", [{"type": "sensor", "id": "s-0"}], timestamp="2024-05-01T10:00:00Z", properties={"seq": i}, idempotency_key=f"fresh-{i}")
        assert client.flush() is True
        second = client.stats()
    assert failures == []
    assert (first.enqueued, first.recorded, first.duplicates, first.failed) == (152, 152, 0, 0)
    assert (second.enqueued, second.queued, second.recorded, second.duplicates, second.failed, second.dropped) == (324, 0, 324, 152, 0, 0)
    keys = [r.get("idempotency_key") for r in service.replay(key["dataset_id"])]
    expected = [f"backlog-{i}" for i in range(150)] + ["object-0", "object-1"] + [f"fresh-{i}" for i in range(150, 170)]
    assert sorted(keys) == sorted(expected)
