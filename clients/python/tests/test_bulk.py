"""The bulk calls' ``duplicates`` and ``on_batch`` (docs/clients.md#python) against the built service
as a real process (see conftest.py), checked through the service's answers and through the log
(``ocelog replay``)."""

from __future__ import annotations

import threading
from collections import Counter
from itertools import accumulate

import pytest

import ocelog
from conftest import Service
from ocelog._batch import read_batch_answer
from scripted import ScriptedServer, accept_all, problem


def tick(seq: int, key: str) -> dict:
    return {"event": "tick", "objects": [{"type": "sensor", "id": f"s-{seq % 7}"}], "timestamp": "2024-05-01T10:00:00Z", "properties": {"seq": seq}, "idempotency_key": key}


def recorded_seqs(service: Service, dataset_id: str) -> Counter:
    return Counter(r["data"]["properties"]["seq"] for r in service.replay(dataset_id) if r["type"] == "EventRecorded")


class Stop(Exception):
    """What the test's on_batch raises."""


def test_duplicates_counts_the_items_whose_keys_were_already_recorded(service, key):
    with ocelog.Client(key["key"], service.url) as client:
        first = client.send_events(tick(i, f"k-{i}") for i in range(150))
        # 120 items repeat keys of the first call with the same content, 129 are new, and one
        # repeats a key with other content: a conflict, which fails and is no duplicate.
        again = [tick(i, f"k-{i}") for i in range(30, 150)] + [tick(i, f"k-{i}") for i in range(150, 279)]
        again.append(tick(999, "k-0"))
        second = client.send_events(again)
    assert (first.processed, first.failed, first.duplicates) == (150, 0, 0)
    assert (second.processed, second.failed, second.duplicates) == (249, 1, 120)
    [conflict] = second.failures
    assert (conflict.index, conflict.path, conflict.kind) == (249, "/idempotency_key", "rejected")
    # A duplicate is answered with the event id first recorded, and nothing new is appended.
    assert second.event_ids[:120] == first.event_ids[30:150]
    seqs = recorded_seqs(service, key["dataset_id"])
    assert sorted(seqs) == list(range(279))
    assert max(seqs.values()) == 1


def test_upsert_objects_counts_duplicates_too(service, key):
    objects = [{"type": "customer", "id": f"c-{i}", "properties": {"tier": "gold"}, "idempotency_key": f"c-{i}"} for i in range(3)]
    with ocelog.Client(key["key"], service.url) as client:
        first = client.upsert_objects(objects)
        second = client.upsert_objects(objects + [{"type": "customer", "id": "c-3", "properties": {"tier": "gold"}}])
    assert (first.processed, first.duplicates, [o["created"] for o in first.objects]) == (3, 0, [True, True, True])
    assert (second.processed, second.duplicates, [o["created"] for o in second.objects]) == (4, 3, [False, False, False, True])
    assert [o["object_id"] for o in second.objects[:3]] == [o["object_id"] for o in first.objects]


def test_on_batch_is_called_once_per_batch_in_order_with_counts_that_sum_to_the_total(service, key):
    items = [tick(i, f"p-{i}") for i in range(250)]
    items[142]["timestamp"] = "yesterday"
    notices = []
    with ocelog.Client(key["key"], service.url, concurrency=1) as client:
        result = client.send_events(items, on_batch=notices.append)
    assert [(n.path, n.items, n.accepted, n.failed, n.requests) for n in notices] == [
        ("/v1/event/batch", 100, 100, 0, 1),
        ("/v1/event/batch", 100, 99, 1, 1),  # item 142, rejected by the service
        ("/v1/event/batch", 50, 50, 0, 1),
    ]
    assert list(accumulate(n.items for n in notices)) == [100, 200, 250]
    assert sum(n.accepted for n in notices) == result.processed == 249
    assert all(n.duration > 0 for n in notices)


def test_on_batch_runs_in_the_calling_thread_with_concurrent_batches(service, key):
    calls = []
    with ocelog.Client(key["key"], service.url, concurrency=4) as client:
        result = client.upsert_objects(
            ({"type": "sensor", "id": f"s-{i}", "properties": {"n": i}} for i in range(1050)),
            on_batch=lambda n: calls.append((threading.get_ident(), n)),
        )
    assert (result.processed, result.failed, result.requests) == (1050, 0, 11)
    assert {thread for thread, _ in calls} == {threading.get_ident()}
    assert sorted(n.items for _, n in calls) == [50] + [100] * 10
    assert sum(n.accepted for _, n in calls) == 1050
    assert {n.path for _, n in calls} == {"/v1/object/batch"}


def test_an_on_batch_that_raises_stops_the_call_and_the_answered_batches_stay_recorded(service, key):
    items = [tick(i, f"r-{i}") for i in range(500)]
    seen = []

    def on_batch(notice: ocelog.BatchNotice) -> None:
        seen.append(notice.items)
        if len(seen) == 2:
            raise Stop("enough")

    with ocelog.Client(key["key"], service.url, concurrency=1) as client:
        with pytest.raises(Stop, match="enough"):
            client.send_events(items, on_batch=on_batch)
        assert seen == [100, 100]
        # The two answered batches are recorded; the third was never sent.
        assert sorted(recorded_seqs(service, key["dataset_id"])) == list(range(200))
        # Sent again with the same keys, the answered items count as duplicates and nothing is recorded twice.
        resumed = client.send_events(items)
    assert (resumed.processed, resumed.failed, resumed.duplicates) == (500, 0, 200)
    seqs = recorded_seqs(service, key["dataset_id"])
    assert sorted(seqs) == list(range(500))
    assert max(seqs.values()) == 1


def test_an_on_batch_that_raises_returns_once_the_batches_in_flight_are_answered(service, key):
    items = [tick(i, f"f-{i}") for i in range(2000)]
    seen = []

    def on_batch(notice: ocelog.BatchNotice) -> None:
        seen.append(notice)
        raise Stop("first batch")

    with ocelog.Client(key["key"], service.url, concurrency=4) as client:
        with pytest.raises(Stop):
            client.send_events(items, on_batch=on_batch)
    assert len(seen) == 1
    # At most `concurrency` batches were sent, each in whole: the one reported and those in flight
    # when it raised, which finished before the call returned.
    seqs = recorded_seqs(service, key["dataset_id"])
    assert 100 <= len(seqs) <= 400 and len(seqs) % 100 == 0
    assert max(seqs.values()) == 1
    assert recorded_seqs(service, key["dataset_id"]) == seqs


# Against a scripted stand-in (scripted.py), for answers the real service does not give on demand.


def events(n: int):
    return [{"event": "e", "objects": [{"type": "order", "id": f"o-{i}"}], "timestamp": "2024-05-01T10:00:00Z"} for i in range(n)]


def test_a_batch_split_by_413s_is_one_notice_and_its_halves_duplicates_add_up():
    def too_large_above_30(request):
        if len(request.body["events"]) > 30:
            return problem(413, "request body is over the limit")
        reply = accept_all(request)
        reply.body["duplicates"] = 1
        return reply

    notices = []
    with ScriptedServer([], default=too_large_above_30) as server:
        result = ocelog.Client("k", server.url, concurrency=1).send_events(events(100), on_batch=notices.append)
    assert [len(r.body["events"]) for r in server.requests] == [100, 50, 25, 25, 50, 25, 25]
    assert [(n.items, n.accepted, n.failed, n.requests) for n in notices] == [(100, 100, 0, 7)]
    assert (result.processed, result.duplicates) == (100, 4)


def test_batches_never_sent_after_a_401_get_no_notice():
    notices = []
    with ScriptedServer([], default=lambda r: problem(401, "unknown key")) as server:
        result = ocelog.Client("k", server.url, concurrency=1).send_events(events(250), on_batch=notices.append)
    assert [(n.items, n.accepted, n.failed) for n in notices] == [(100, 0, 100)]
    assert len(server.requests) == 1
    assert (result.failed, result.duplicates, result.aborted is not None) == (250, 0, True)


@pytest.mark.parametrize(("value", "counted"), [(None, 0), (2, 2), (2.0, 2), (2.5, 0), (-1, 0), (True, 0), ("2", 0)])
def test_the_answers_duplicates_is_read_as_the_typescript_client_reads_it(value, counted):
    body = {"event_ids": ["a", "b", "c"], "errors": []}
    if value is not None:
        body["duplicates"] = value
    reading = read_batch_answer(body, 3, "event_ids", lambda v: isinstance(v, str))
    assert reading is not None and reading.duplicates == counted
