"""Retries and back-off, against a scripted http.server answering 429 (with Retry-After), 503,
dropped connections and stalls; and the pure retry rules."""

from __future__ import annotations

import threading
from email.utils import format_datetime
from datetime import datetime, timedelta, timezone

import pytest

import ocelog
from ocelog._retry import RetryPolicy, backoff_delay, classify_status, parse_retry_after
from scripted import Drop, Reply, ScriptedServer, Stall, accept_all, problem

EVENT = {"event": "place order", "objects": [{"type": "order", "id": "o-1"}]}
FAST = {"backoff_base": 0.01, "backoff_max": 0.05}


def events(n: int):
    return [{"event": "e", "objects": [{"type": "order", "id": f"o-{i}"}], "timestamp": "2024-05-01T10:00:00Z"} for i in range(n)]


class TestRetryRules:
    def test_classifies_statuses_as_the_typescript_client(self):
        assert [classify_status(s) for s in (200, 429, 413, 401, 403, 500, 503, 400, 404, 415, 422)] == [
            "ok", "rate-limited", "too-large", "fatal", "fatal", "server-error", "server-error", "rejected", "rejected", "rejected", "rejected",
        ]  # fmt: skip

    def test_backoff_doubles_up_to_the_cap_with_equal_jitter(self):
        policy = RetryPolicy(backoff_base=0.25, backoff_max=2.0)
        assert [backoff_delay(a, policy, lambda: 0.0) for a in (1, 2, 3, 4, 5)] == [0.125, 0.25, 0.5, 1.0, 1.0]
        assert backoff_delay(3, policy, lambda: 0.999) == pytest.approx(0.9995)

    def test_reads_retry_after_as_seconds_or_an_http_date(self):
        now = datetime(2024, 5, 1, 10, 0, 0, tzinfo=timezone.utc)
        assert parse_retry_after("3", now.timestamp()) == 3.0
        assert parse_retry_after(format_datetime(now + timedelta(seconds=7), usegmt=True), now.timestamp()) == pytest.approx(7.0)
        assert parse_retry_after(format_datetime(now - timedelta(seconds=7), usegmt=True), now.timestamp()) == 0.0
        assert parse_retry_after("soon", now.timestamp()) is None
        assert parse_retry_after(None, now.timestamp()) is None


class TestRateLimit:
    def test_waits_out_retry_after_then_succeeds(self):
        notices = []
        with ScriptedServer([problem(429, "slow down", headers={"Retry-After": "1"})]) as server:
            client = ocelog.Client("k", server.url, on_retry=notices.append)
            answer = client.send_event("place order", [{"type": "order", "id": "o-1"}])
        assert answer["event_type"] == "place order"
        assert [(n.cause, n.delay, n.status) for n in notices] == [("rate-limited", 1.0, 429)]
        assert server.requests[1].at - server.requests[0].at >= 1.0
        stats = client.stats()
        assert (stats.rate_limited, stats.retries, stats.requests) == (1, 1, 2)
        assert stats.rate_limit_wait_seconds == pytest.approx(1.0, abs=0.05)

    def test_a_429_pauses_every_request_of_the_client(self):
        got_429 = threading.Event()
        with ScriptedServer([problem(429, "slow down", headers={"Retry-After": "1"})]) as server:
            client = ocelog.Client("k", server.url, concurrency=4, on_retry=lambda n: got_429.set())
            first = threading.Thread(target=client.health)
            first.start()
            assert got_429.wait(10)
            # A second request, made while the first waits, waits with it (the budget is per key).
            client.upsert_object("order", "o-2")
            first.join()
        assert sorted(server.paths()) == ["/v1/health", "/v1/health", "/v1/object/upsert"]
        assert min(r.at for r in server.requests[1:]) - server.requests[0].at >= 1.0

    def test_raises_rate_limit_error_when_the_waits_run_out(self):
        with ScriptedServer([problem(429, "slow down", headers={"Retry-After": "0"})] * 2) as server:
            client = ocelog.Client("k", server.url, max_rate_limit_waits=1)
            with pytest.raises(ocelog.RateLimitError) as caught:
                client.health()
        assert caught.value.status == 429
        assert caught.value.retry_after == 0.0
        assert len(server.requests) == 2


class TestBackoff:
    def test_retries_503_with_growing_delays_then_succeeds(self):
        notices = []
        with ScriptedServer([problem(503, "log down", headers={"Retry-After": "1"}), problem(503, "log down")]) as server:
            client = ocelog.Client("k", server.url, on_retry=notices.append, backoff_base=0.02, backoff_max=1.0)
            client.send_event("place order", [{"type": "order", "id": "o-1"}])
        assert [(n.cause, n.attempt, n.status) for n in notices] == [("server-error", 1, 503), ("server-error", 2, 503)]
        assert 0.01 <= notices[0].delay < 0.02
        assert 0.02 <= notices[1].delay < 0.04
        assert len(server.requests) == 3

    def test_retries_a_dropped_connection(self):
        notices = []
        with ScriptedServer([Drop(), Drop()]) as server:
            client = ocelog.Client("k", server.url, on_retry=notices.append, **FAST)
            assert client.health()["status"] == "ok"
        assert [n.cause for n in notices] == ["network", "network"]
        assert len(server.requests) == 3

    def test_retries_a_timeout(self):
        notices = []
        with ScriptedServer([Stall(0.5)]) as server:
            client = ocelog.Client("k", server.url, timeout=0.2, on_retry=notices.append, **FAST)
            assert client.health()["status"] == "ok"
        assert [n.cause for n in notices] == ["timeout"]

    def test_raises_server_error_after_max_retries(self):
        with ScriptedServer([], default=lambda r: problem(503, "log down")) as server:
            client = ocelog.Client("k", server.url, max_retries=2, **FAST)
            with pytest.raises(ocelog.ServerError) as caught:
                client.send_event("place order", [{"type": "order", "id": "o-1"}])
        assert caught.value.status == 503
        assert len(server.requests) == 3

    def test_raises_connection_error_when_no_answer_comes(self):
        with ScriptedServer([], default=lambda r: Drop()) as server:
            client = ocelog.Client("k", server.url, max_retries=1, **FAST)
            with pytest.raises(ocelog.ConnectionError) as caught:
                client.health()
        assert isinstance(caught.value, ocelog.OcelogError)
        assert caught.value.status is None
        assert len(server.requests) == 2

    def test_connection_error_when_nothing_listens(self):
        with ScriptedServer() as server:
            url = server.url
        client = ocelog.Client("k", url, max_retries=0)
        with pytest.raises(ocelog.ConnectionError):
            client.health()


class TestPermanentErrors:
    @pytest.mark.parametrize(
        ("status", "cls"),
        [
            (400, ocelog.APIError),
            (401, ocelog.AuthenticationError),
            (403, ocelog.PermissionDeniedError),
            (404, ocelog.NotFoundError),
            (413, ocelog.APIError),
            (415, ocelog.APIError),
        ],
    )
    def test_other_4xx_raise_at_once(self, status, cls):
        with ScriptedServer([problem(status, "no")]) as server:
            client = ocelog.Client("k", server.url)
            with pytest.raises(cls) as caught:
                client.send_event("place order", [{"type": "order", "id": "o-1"}])
        assert caught.value.status == status
        assert caught.value.request_id == "req-1"
        assert len(server.requests) == 1

    def test_422_raises_validation_error_with_the_field_errors(self):
        errors = [{"path": "/timestamp", "message": "is not a valid ISO 8601 date-time"}, {"path": "/objects", "message": "must have 1 to 50 items"}]
        with ScriptedServer([problem(422, "The event was rejected", errors)]) as server:
            client = ocelog.Client("k", server.url)
            with pytest.raises(ocelog.ValidationError) as caught:
                client.send_event("place order", [], timestamp="yesterday")
        assert [(e.path, e.message) for e in caught.value.errors] == [(e["path"], e["message"]) for e in errors]
        assert len(server.requests) == 1

    def test_a_naive_datetime_is_refused_before_sending(self):
        with ScriptedServer() as server:
            client = ocelog.Client("k", server.url)
            with pytest.raises(ValueError, match="naive datetime"):
                client.send_event("place order", [{"type": "order", "id": "o-1"}], timestamp=datetime(2024, 5, 1, 10, 0))
        assert server.requests == []

    def test_an_aware_datetime_is_sent_in_utc_with_milliseconds(self):
        with ScriptedServer() as server:
            client = ocelog.Client("k", server.url)
            start = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
            client.send_event("e", [{"type": "order", "id": "o-1"}], timestamp=start, end_timestamp="2024-05-01T10:05:00Z", properties={"at": start})
        body = server.requests[0].body
        assert (body["timestamp"], body["end_timestamp"], body["properties"]) == ("2024-05-01T10:00:00.123Z", "2024-05-01T10:05:00Z", {"at": "2024-05-01T10:00:00.123Z"})
        assert server.requests[0].headers["authorization"] == "Bearer k"


class TestBulk:
    def test_sends_batches_of_100_and_keeps_input_order(self):
        with ScriptedServer() as server:
            client = ocelog.Client("k", server.url, concurrency=3)
            result = client.send_events(iter(events(250)))
        assert sorted(len(r.body["events"]) for r in server.requests) == [50, 100, 100]
        assert (result.processed, result.failed, len(result.event_ids)) == (250, 0, 250)
        assert [a.index for a in result.accepted] == list(range(250))
        assert [a.value for a in result.accepted] == result.event_ids

    def test_names_failed_items_by_the_callers_index(self):
        def fail_third(request):
            n = len(request.body["events"])
            ids = [f"id-{i}" for i in range(n - 1)]
            detail = {"index": 3, "path": "/timestamp", "message": "is not valid"}
            return Reply(200, {"success": False, "processed": n - 1, "failed": 1, "event_ids": ids, "errors": ["Event 3: /timestamp: is not valid"], "error_details": [detail]})

        with ScriptedServer([], default=fail_third) as server:
            result = ocelog.Client("k", server.url).send_events(events(250))
        assert [(f.index, f.path, f.message, f.kind) for f in result.failures] == [
            (i, "/timestamp", f"Event {i}: /timestamp: is not valid", "rejected") for i in (3, 103, 203)
        ]
        assert (result.processed, result.failed) == (247, 3)
        assert len(server.requests) == 3  # item failures are never re-sent

    def test_a_naive_datetime_fails_only_its_item(self):
        items = events(3)
        items[1]["timestamp"] = datetime(2024, 5, 1, 10, 0)
        with ScriptedServer() as server:
            result = ocelog.Client("k", server.url).send_events(items)
        assert [(f.index, f.path, f.kind) for f in result.failures] == [(1, "/timestamp", "invalid")]
        assert [a.index for a in result.accepted] == [0, 2]
        assert len(server.requests[0].body["events"]) == 2

    def test_a_413_splits_the_batch(self):
        def too_large_above_30(request):
            if len(request.body["events"]) > 30:
                return problem(413, "request body is over the limit")
            return accept_all(request)

        with ScriptedServer([], default=too_large_above_30) as server:
            result = ocelog.Client("k", server.url, concurrency=1).send_events(events(100))
        assert [len(r.body["events"]) for r in server.requests] == [100, 50, 25, 25, 50, 25, 25]
        assert result.processed == 100
        assert [a.index for a in result.accepted] == list(range(100))

    def test_retries_a_batch_after_503_and_a_dropped_connection(self):
        with ScriptedServer([problem(503, "log down"), Drop()]) as server:
            result = ocelog.Client("k", server.url, concurrency=1, **FAST).send_events(events(100))
        assert result.processed == 100
        assert (result.requests, result.retries) == (3, 2)
        assert [r.body for r in server.requests] == [server.requests[0].body] * 3

    def test_a_401_stops_the_call(self):
        with ScriptedServer([], default=lambda r: problem(401, "unknown key")) as server:
            result = ocelog.Client("k", server.url, concurrency=1).send_events(events(300))
        assert result.aborted is not None and "401" in result.aborted
        assert len(server.requests) == 1
        assert [f.kind for f in result.failures] == ["request-rejected"] * 100 + ["aborted"] * 200
        assert [f.index for f in result.failures] == list(range(300))

    def test_an_answer_that_does_not_account_for_the_items_is_a_protocol_failure(self):
        with ScriptedServer([Reply(200, {"success": True, "event_ids": ["only-one"], "errors": []})]) as server:
            result = ocelog.Client("k", server.url).send_events(events(2))
        assert [f.kind for f in result.failures] == ["protocol", "protocol"]
        assert len(server.requests) == 1

    def test_upserts_objects_in_batches(self):
        with ScriptedServer() as server:
            result = ocelog.Client("k", server.url).upsert_objects({"type": "order", "id": f"o-{i}", "properties": {"n": i}} for i in range(120))
        assert [o["external_id"] for o in result.objects] == [f"o-{i}" for i in range(120)]
        assert sorted(len(r.body["objects"]) for r in server.requests) == [20, 100]
        assert set(server.paths()) == {"/v1/object/batch"}

    def test_gzips_large_bodies_when_asked(self):
        import gzip
        import json

        seen = []

        def capture(request):
            seen.append(request)
            return Reply(200, {"status": "ok", "dataset_id": "d"})

        with ScriptedServer([], default=capture) as server:
            client = ocelog.Client("k", server.url, compress=True, compress_min_bytes=10)
            # The scripted server does not decompress: read the raw body it got.
            client._transport.call("POST", "/v1/x", b'{"events":[1,2,3,4,5,6]}')
        assert seen[0].headers["content-encoding"] == "gzip"
        assert json.loads(gzip.decompress(seen[0].body)) == {"events": [1, 2, 3, 4, 5, 6]}
