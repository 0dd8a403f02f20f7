"""The client against the built service as a real process (see conftest.py), checked through the
service's answers and through the log (``ocelog replay``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest

import ocelog
from conftest import SRC, Service

ORDER = [{"type": "order", "id": "o-1", "qualifier": "target"}]


def recorded_events(service: Service, dataset_id: str):
    return [r["data"] for r in service.replay(dataset_id) if r["type"] == "EventRecorded"]


def test_health_names_the_keys_dataset(service, key):
    with ocelog.Client(key["key"], service.url) as client:
        health = client.health()
    assert (health["status"], health["dataset_id"], health["key_id"]) == ("ok", key["dataset_id"], key["key_id"])


def test_send_event_is_recorded_in_the_log(service, key):
    at = datetime(2024, 5, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    with ocelog.Client(key["key"], service.url) as client:
        answer = client.send_event("place order", ORDER, timestamp=at, end_timestamp="2024-05-01T10:30:00Z", properties={"channel": "web"})
    assert (answer["event_type"], answer["timestamp"], answer["objects_count"]) == ("place order", "2024-05-01T10:00:00.000Z", 1)
    [event] = recorded_events(service, key["dataset_id"])
    assert (event["event_id"], event["end_timestamp"], event["properties"]) == (answer["event_id"], "2024-05-01T10:30:00.000Z", {"channel": "web"})
    assert [(o["type"], o["id"], o["qualifier"]) for o in event["objects"]] == [("order", "o-1", "target")]


def test_send_events_records_the_good_items_and_names_the_bad_one(service, key):
    items = [{"event": "tick", "objects": [{"type": "sensor", "id": f"s-{i}"}], "timestamp": "2024-05-01T10:00:00Z", "properties": {"seq": i}} for i in range(250)]
    items[142]["timestamp"] = "yesterday"
    with ocelog.Client(key["key"], service.url) as client:
        result = client.send_events(items)
    assert (result.processed, result.failed) == (249, 1)
    [failure] = result.failures
    assert (failure.index, failure.path, failure.kind, failure.message.startswith("Event 142: /timestamp:")) == (142, "/timestamp", "rejected", True)
    events = recorded_events(service, key["dataset_id"])
    assert sorted(e["event_id"] for e in events) == sorted(result.event_ids)
    assert sorted(e["properties"]["seq"] for e in events) == [i for i in range(250) if i != 142]


def test_upsert_object_creates_then_merges(service, key):
    with ocelog.Client(key["key"], service.url) as client:
        first = client.upsert_object("customer", "c-9", {"tier": "silver"})
        second = client.upsert_object("customer", "c-9", {"tier": "gold"})
        batch = client.upsert_objects([{"type": "customer", "id": "c-9"}, {"type": "customer", "id": "c-10", "properties": {"tier": "bronze"}}])
    assert (first["created"], second["created"], first["object_id"]) == (True, False, second["object_id"])
    assert [(o["external_id"], o["created"]) for o in batch.objects] == [("c-9", False), ("c-10", True)]


def test_upsert_object_sends_the_time_of_its_values_and_its_o2o_relationships(service, key):
    at = datetime(2024, 5, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    with ocelog.Client(key["key"], service.url) as client:
        client.upsert_object("order", "o-7", {"status": "open"}, timestamp=at, relationships=[{"type": "customer", "id": "c-9", "qualifier": "placed by"}])
        batch = client.upsert_objects([{"type": "order", "id": "o-8", "timestamp": at, "relationships": [{"type": "item", "id": "i-1"}]}])
    assert batch.failed == 0
    upserts = [r["data"] for r in service.replay(key["dataset_id"]) if r["type"] == "ObjectUpserted"]
    assert [(u["id"], u["time"], [(r["type"], r["id"], r.get("qualifier")) for r in u["relationships"]]) for u in upserts] == [
        ("o-7", "2024-05-01T10:00:00.000Z", [("customer", "c-9", "placed by")]),
        ("o-8", "2024-05-01T10:00:00.000Z", [("item", "i-1", None)]),
    ]


def test_an_unknown_key_raises_authentication_error(service):
    with ocelog.Client("ocl_0000000000000000_nope", service.url) as client:
        with pytest.raises(ocelog.AuthenticationError) as caught:
            client.health()
    assert caught.value.status == 401


def test_a_key_without_ingest_write_raises_permission_denied(service):
    reader = service.create_key(scopes=["process:read"])
    with ocelog.Client(reader["key"], service.url) as client:
        assert client.health()["scopes"] == ["process:read"]
        with pytest.raises(ocelog.PermissionDeniedError):
            client.send_event("place order", ORDER)


def test_a_broken_rule_raises_validation_error_naming_the_field(service, key):
    with ocelog.Client(key["key"], service.url) as client:
        with pytest.raises(ocelog.ValidationError) as caught:
            client.send_event("place order", [{"type": "order", "id": f"o-{i}"} for i in range(51)])
    assert caught.value.status == 422
    assert [e.path for e in caught.value.errors] == ["/objects"]


# A new user's first script (docs/clients.md#python): a 10-line script enqueues 10,000 events and flushes, against a
# service whose rate limit is low enough that 429s happen.
NEW_USER_SCRIPT = """\
import json, os, ocelog
client = ocelog.Client(os.environ["OCELOG_API_KEY"], os.environ["OCELOG_URL"])
for i in range(10_000):
    client.enqueue_event("tick", [{"type": "sensor", "id": f"s-{i % 7}"}],
                         timestamp="2024-05-01T10:00:00Z", properties={"seq": i})
client.flush()
s = client.stats()
print(json.dumps({"recorded": s.recorded, "failed": s.failed, "rate_limited": s.rate_limited}))
client.close()
"""

RATE_BUDGET = 60  # requests per 10 s window: the 100 batches need a second window after the burnt one
LOW_RATE = {"OCELOG_RATE_LIMIT_PER_MINUTE": str(RATE_BUDGET * 6), "OCELOG_RATE_LIMIT_WINDOW_SECONDS": "10"}


@pytest.fixture(scope="module")
def slow_service():
    s = Service(LOW_RATE)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def installed_client(tmp_path_factory):
    """``pip install ./clients/python`` into a fresh folder, as a new user would (offline: the package
    needs nothing but the standard library, and builds with the setuptools at hand). Returns the folder
    to put on PYTHONPATH; the source tree when this Python has no pip or setuptools, said on stdout."""
    target = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--no-build-isolation", "--target", str(target), str(SRC.parent)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        print(f"skip: pip install of the client failed here, so the script runs from the source tree: {done.stderr.strip()[-300:]}")
        return str(SRC)
    assert (target / "ocelog" / "__init__.py").exists()
    return str(target)


def test_ten_thousand_enqueued_events_land_exactly_once_under_429s(slow_service, installed_client):
    key = slow_service.create_key(name="new-user")
    # Spend this key's budget for the current window first, so the script's first batch meets a
    # 429 however fast or slow this machine is; later windows may add more.
    with ocelog.Client(key["key"], slow_service.url, max_rate_limit_waits=0) as burner:
        for _ in range(10 * RATE_BUDGET):
            try:
                burner.health()
            except ocelog.RateLimitError:
                break
        else:
            pytest.fail(f"no 429 after {10 * RATE_BUDGET} requests: is the low rate limit in force?")
    env = {**os.environ, "PYTHONPATH": installed_client, "OCELOG_API_KEY": key["key"], "OCELOG_URL": slow_service.url}
    done = subprocess.run([sys.executable, "-c", NEW_USER_SCRIPT], env=env, capture_output=True, text=True, timeout=110)
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    assert (stats["recorded"], stats["failed"]) == (10_000, 0)
    assert stats["rate_limited"] >= 1  # it waited out Retry-After instead of failing

    events = recorded_events(slow_service, key["dataset_id"])
    seqs = Counter(e["properties"]["seq"] for e in events)
    assert len(events) == 10_000
    assert sorted(seqs) == list(range(10_000))  # every event, none twice
    assert len({e["event_id"] for e in events}) == 10_000


def test_send_events_outlasts_a_killed_and_restarted_service():
    # Exactly once: a batch whose answer was lost in the crash is retried with the same idempotency
    # keys, so the service answers it as first recorded and records nothing twice.
    service = Service()
    try:
        key = service.create_key()
        halfway = threading.Event()

        def items():
            for i in range(3000):
                if i == 1000:
                    halfway.set()
                yield {"event": "tick", "objects": [{"type": "sensor", "id": "s-1"}], "timestamp": "2024-05-01T10:00:00Z", "properties": {"seq": i}}

        results = []
        client = ocelog.Client(key["key"], service.url, concurrency=2, backoff_base=0.2, backoff_max=2.0, max_retries=20)
        sender = threading.Thread(target=lambda: results.append(client.send_events(items())))
        sender.start()
        assert halfway.wait(60)
        service.kill()
        service.start()
        sender.join(120)
        [result] = results
        assert (result.processed, result.failed) == (3000, 0)
        assert result.retries >= 1  # the crash was seen and retried
        seqs = Counter(e["properties"]["seq"] for e in recorded_events(service, key["dataset_id"]))
        assert sorted(seqs) == list(range(3000))
        assert max(seqs.values()) == 1, f"recorded twice: {[s for s, n in seqs.items() if n > 1][:10]}"
    finally:
        service.stop()


def test_read_methods_answer_the_process_map_the_object_and_every_page_of_events(service, key):
    """Three steps of one order, the first two with end_timestamps: run time, waiting time and paging, read back
    through the read side once the service's projector has applied them."""
    steps = [
        ("place order", "2024-05-01T10:00:00Z", "2024-05-01T10:10:00Z"),
        ("pick item", "2024-05-01T10:30:00Z", "2024-05-01T10:35:00Z"),
        ("ship order", "2024-05-01T11:35:00Z", None),
    ]
    with ocelog.Client(key["key"], service.url) as client:
        for activity, start, end in steps:
            client.send_event(activity, [{"type": "order", "id": "o-7", "qualifier": "target"}], timestamp=start, end_timestamp=end)
        deadline = time.monotonic() + 20
        while client.summary()["events"] < 3:
            assert time.monotonic() < deadline, "the read models did not reach the three events within 20 s"
            time.sleep(0.1)

        [order_map] = client.process_map(object_types=["order"])["object_types"]
        edges = {(e["source"], e["target"]): e for e in order_map["edges"]}
        assert sorted(edges) == [("pick item", "ship order"), ("place order", "pick item")]
        assert edges[("place order", "pick item")]["elapsed"]["median"] == 1800
        assert edges[("place order", "pick item")]["waiting"]["median"] == 1200
        assert edges[("pick item", "ship order")]["waiting"]["median"] == 3600
        run_times = {a["activity"]: a["run_time"] for a in order_map["activities"]}
        assert (run_times["place order"]["median"], run_times["pick item"]["median"], run_times["ship order"]) == (600, 300, None)

        detail = client.get_object("order", "o-7")
        assert [(e["event_type"], e["qualifiers"]) for e in detail["trace"]] == [(s[0], ["target"]) for s in steps]
        with pytest.raises(ocelog.NotFoundError):
            client.get_object("order", "nobody")

        paged = list(client.find_events(object_type="order", object_id="o-7", page_size=2))
        assert [e["event_type"] for e in paged] == [s[0] for s in steps]
