"""Read methods (GET /v1/process/*): request building and cursor paging, against a scripted
http.server. Live tests follow once the read endpoints are in the service."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import ocelog
from scripted import Reply, ScriptedServer, problem


def page(events, cursor):
    return Reply(200, {"dataset_id": "d1", "as_of": 7, "events": events, "next_cursor": cursor})


def test_process_map_repeats_object_type_and_sends_times_in_utc():
    answer = {"dataset_id": "d1", "as_of": 3, "object_types": []}
    with ScriptedServer([Reply(200, answer)]) as server:
        client = ocelog.Client("k", server.url)
        got = client.process_map(["order", "item"], from_=datetime(2024, 5, 1, 12, 0, tzinfo=timezone(timedelta(hours=2))), to="2024-06-01T00:00:00Z")
    assert got == answer
    r = server.requests[0]
    assert (r.method, r.path) == ("GET", "/v1/process/map")
    assert r.query == [("object_type", "order"), ("object_type", "item"), ("from", "2024-05-01T10:00:00.000Z"), ("to", "2024-06-01T00:00:00Z")]


def test_process_map_without_filters_sends_no_query():
    with ScriptedServer([Reply(200, {"dataset_id": "d1", "as_of": 0, "object_types": []})]) as server:
        ocelog.Client("k", server.url).process_map()
    assert server.requests[0].query == []


def test_get_object_quotes_type_and_id_as_path_segments():
    with ScriptedServer([Reply(200, {"dataset_id": "d1", "as_of": 1, "object": {"id": "a/b c"}})]) as server:
        got = ocelog.Client("k", server.url).get_object("sales order", "a/b c")
    assert got["object"]["id"] == "a/b c"
    assert server.requests[0].path == "/v1/process/objects/sales%20order/a%2Fb%20c"


def test_get_object_raises_not_found_for_a_404():
    with ScriptedServer([problem(404, "no object order/o-9 in this dataset")]) as server:
        with pytest.raises(ocelog.NotFoundError):
            ocelog.Client("k", server.url).get_object("order", "o-9")


def test_find_events_follows_the_cursor_through_every_page():
    with ScriptedServer([page([{"event_id": "1"}, {"event_id": "2"}], "c1"), page([{"event_id": "3"}], "c2"), page([], None)]) as server:
        got = list(ocelog.Client("k", server.url).find_events(object_type="order", event_type="pay", page_size=2))
    assert [e["event_id"] for e in got] == ["1", "2", "3"]
    queries = [r.query for r in server.requests]
    base = [("event_type", "pay"), ("object_type", "order"), ("limit", "2")]
    assert queries == [base, base + [("cursor", "c1")], base + [("cursor", "c2")]]


def test_find_events_is_lazy():
    with ScriptedServer([page([{"event_id": "1"}], "c1"), page([{"event_id": "2"}], None)]) as server:
        events = ocelog.Client("k", server.url).find_events(object_id="o-1")
        assert server.requests == []
        assert next(events)["event_id"] == "1"
        assert len(server.requests) == 1
    assert server.requests[0].query == [("object_id", "o-1")]


def test_find_events_raises_validation_error_naming_the_parameter():
    with ScriptedServer([problem(422, "parameter from: is not a date-time", [{"path": "from", "message": "is not a date-time"}])]) as server:
        with pytest.raises(ocelog.ValidationError) as caught:
            list(ocelog.Client("k", server.url).find_events(from_="yesterday"))
    assert [e.path for e in caught.value.errors] == ["from"]


def test_read_methods_wait_out_a_429():
    with ScriptedServer([problem(429, "slow down", headers={"Retry-After": "0"}), Reply(200, {"dataset_id": "d1", "as_of": 0, "events": 0})]) as server:
        client = ocelog.Client("k", server.url)
        assert client.summary()["events"] == 0
    assert client.stats().rate_limited == 1
