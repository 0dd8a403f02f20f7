"""The Python client of the Ocelog ingestion API (README § Clients: "official client
libraries ... handle authentication, batching and retries"). It wraps the ``/v1`` endpoints and adds
no behaviour beyond the HTTP contract:

- authentication: ``Authorization: Bearer <key>`` on every request;
- batching: ``send_events`` / ``upsert_objects`` take any iterable and send batches of at most 100
  (docs/api.md#limits), at most ``concurrency`` requests in flight over the whole client;
- retries, as the TypeScript client does them: a 429 is waited out for its ``Retry-After`` and all
  requests of the client pause with it (the budget is per key); network errors, timeouts and 5xx
  are retried with exponential back-off and jitter, at most ``max_retries`` times; a 413 splits a
  batch; other 4xx are permanent;
- queue and flush for live senders: ``enqueue_event`` / ``enqueue_object`` and a background thread.

Exactly once: every item gets an idempotency key (a random UUID) unless the caller gives one, set
once before its first send. When an answer is lost after the service recorded the request (a dropped
connection, a timeout, a restart), the retry carries the same keys and the service answers it as
first recorded, so no item is recorded twice (README § Exactly once).
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
import urllib.parse
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from ._batch import BATCH_MAX, EVENTS, OBJECTS, Endpoint, Outcome, Prepared, not_sent, send_batch
from ._encode import TimeLike, dumps, event_input, iso_time, normalize_event, normalize_object, object_input, types_input
from ._errors import ProtocolError
from ._queue import Sender
from ._retry import RetryPolicy
from ._transport import Counters, RetryNotice, Transport
from ._types import Accepted, BatchNotice, BatchResult, ClientStats, Failure

__version__ = "0.1.0"

_Query = List[Tuple[str, str]]


def _require_dict(body: Any, what: str, *fields: str) -> Dict[str, Any]:
    if not isinstance(body, dict) or any(f not in body for f in fields):
        raise ProtocolError(f"{what}: the answer is not the documented shape (expected the fields {', '.join(fields)})", 200)
    return body


class Client:
    """A client of one Ocelog service with one API key. Safe to use from several threads.

    Usage::

        with ocelog.Client(os.environ["OCELOG_API_KEY"], "http://localhost:8080") as client:
            client.send_event("place order", [{"type": "order", "id": "o-1"}], timestamp="2024-05-01T10:00:00Z")
            client.enqueue_event("pay order", [{"type": "order", "id": "o-1"}])
        # leaving the block flushes the queue and stops its thread

    Args:
        api_key: the key, ``ocl_<key id>_<secret>``; sent as ``Authorization: Bearer <key>``.
        base_url: the service, e.g. ``http://localhost:8080`` (a path prefix is kept).
        timeout: seconds one HTTP request may take (connect and each read); a request that times
            out is retried with the same idempotency keys, so its items are recorded once.
        max_retries: retries after network errors, timeouts and 5xx answers, per request.
        max_rate_limit_waits: 429 answers one request may wait out before it fails.
        backoff_base: seconds of the first back-off (doubling per retry, with jitter).
        backoff_max: the largest back-off, seconds.
        concurrency: most HTTP requests in flight at once over all calls of this client.
        flush_at: the queue sends a batch as soon as this many items of one kind wait (1-100).
        flush_interval: seconds the oldest queued item waits at most before its batch is sent.
        max_queue_size: most items waiting in the queue (the batch in flight not counted).
        when_full: ``"block"`` (default): ``enqueue_*`` waits for room, so a tight loop loses
            nothing; ``"drop"``: the item is discarded, counted in ``stats().dropped`` and reported
            to ``on_error`` and the log.
        on_error: called with a :class:`~ocelog.Failure` for every queued item that was not
            recorded, from the sender thread; it must not call ``flush()`` or ``close()``, nor
            enqueue with ``when_full="block"`` (the sender would wait for itself). Each is also
            logged at ERROR on the ``ocelog`` logger.
        on_retry: called with a :class:`~ocelog.RetryNotice` before every retry and 429 wait.
        compress: gzip request bodies of at least ``compress_min_bytes`` bytes, sent with
            ``Content-Encoding: gzip`` (RFC 9110 § 8.4), which the Ocelog service decompresses.
            On by default; turn it off behind a proxy that does not pass compressed bodies on.
        compress_min_bytes: smallest JSON body that ``compress`` gzips.
        user_agent: the User-Agent header.

    Raises:
        ValueError: for an empty key, a base_url that is not http(s), or an option out of range.
    """

    def __init__(
        self,
        api_key: str,
        base_url: str = "http://localhost:8080",
        *,
        timeout: float = 30.0,
        max_retries: int = 7,
        max_rate_limit_waits: int = 100,
        backoff_base: float = 0.25,
        backoff_max: float = 20.0,
        concurrency: int = 4,
        flush_at: int = BATCH_MAX,
        flush_interval: float = 1.0,
        max_queue_size: int = 10_000,
        when_full: str = "block",
        on_error: Optional[Callable[[Failure], None]] = None,
        on_retry: Optional[Callable[[RetryNotice], None]] = None,
        compress: bool = True,
        compress_min_bytes: int = 64 * 1024,
        user_agent: str = f"ocelog-python/{__version__}",
    ) -> None:
        if not isinstance(api_key, str) or api_key.strip() == "":
            raise ValueError("api_key is empty")
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f'base_url "{base_url}" must be an http:// or https:// URL, e.g. http://localhost:8080')
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        if not 1 <= flush_at <= BATCH_MAX:
            raise ValueError(f"flush_at must be 1 to {BATCH_MAX}, got {flush_at}")
        if max_queue_size < 1 or flush_interval <= 0 or timeout <= 0 or max_retries < 0 or max_rate_limit_waits < 0:
            raise ValueError("max_queue_size, flush_interval and timeout must be positive; max_retries and max_rate_limit_waits at least 0")
        if when_full not in ("block", "drop"):
            raise ValueError(f'when_full must be "block" or "drop", got {when_full!r}')
        self._concurrency = concurrency
        self._transport = Transport(
            base_url.rstrip("/"),
            api_key.strip(),
            timeout=timeout,
            policy=RetryPolicy(max_retries, backoff_base, backoff_max, max_rate_limit_waits),
            concurrency=concurrency,
            user_agent=user_agent,
            compress=compress,
            compress_min_bytes=compress_min_bytes,
            on_retry=on_retry,
        )
        self._sender = Sender(
            self._transport, flush_at=flush_at, flush_interval=flush_interval, max_queue_size=max_queue_size, when_full=when_full, on_error=on_error
        )

    @property
    def base_url(self) -> str:
        """The service's base URL, without a trailing slash."""
        return self._transport.base_url

    def __repr__(self) -> str:
        return f"ocelog.Client(base_url={self.base_url!r})"

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- ingestion: single items ---------------------------------------------------------------------

    def health(self) -> Dict[str, Any]:
        """``GET /v1/health``: checks that the service answers and the key is valid.

        Returns:
            ``{status: "ok", dataset_id, dataset_name, key_id, key_name, scopes: [str]}``.

        Raises:
            AuthenticationError: 401, the key is not accepted.
            ConnectionError: no answer after the retries.
            OcelogError: another error (see :mod:`ocelog` for the classes).
        """
        return _require_dict(self._transport.call("GET", "/v1/health"), "GET /v1/health", "status", "dataset_id")

    def send_event(
        self,
        event: str,
        objects: Iterable[Mapping[str, Any]],
        *,
        timestamp: Optional[TimeLike] = None,
        end_timestamp: Optional[TimeLike] = None,
        properties: Optional[Mapping[str, Any]] = None,
        idempotency_key: Optional[str] = None,
    ) -> Dict[str, Any]:
        """``POST /v1/event``: records one event (docs/api.md#event-input).

        Args:
            event: the activity (event type name), 1-200 characters.
            objects: 1-50 objects ``{type, id, qualifier?, properties?}``; ``properties`` are merged
                into the object's attributes.
            timestamp: when it happened: ISO 8601 with ``Z`` or an offset, or a timezone-aware
                ``datetime``; default the service's time of receipt.
            end_timestamp: when it ended (needs ``timestamp``), as ``timestamp``.
            properties: the event's attributes, any JSON object.
            idempotency_key: 1-255 characters, none of them U+0000, unique in the dataset for ever;
                default a new random UUID. Sending the same key with the same content again answers
                with the event first recorded and records nothing; with other content it raises
                ConflictError (409).

        Returns:
            ``{success, event_id, event_type, timestamp (UTC ISO 8601), objects_count, message}``.

        Raises:
            ValueError: a naive ``datetime`` (its zone would be a guess), or NaN in ``properties``.
            TypeError: a value JSON cannot hold.
            ValidationError: 422, with ``errors`` naming every broken field and its rule.
            AuthenticationError, PermissionDeniedError: 401, 403.
            RateLimitError, ServerError, ConnectionError: 429, 5xx or no answer outlasted the retries.
        """
        body = dumps(event_input(event, objects, timestamp, end_timestamp, properties, idempotency_key))
        return _require_dict(self._transport.call("POST", "/v1/event", body), "POST /v1/event", "event_id", "timestamp")

    def upsert_object(  # noqa: A002 - the API's field names
        self,
        type: str,  # noqa: A002
        id: str,  # noqa: A002
        properties: Optional[Mapping[str, Any]] = None,
        *,
        timestamp: Optional[TimeLike] = None,
        relationships: Optional[Iterable[Mapping[str, Any]]] = None,
        idempotency_key: Optional[str] = None,
    ) -> Dict[str, Any]:
        """``POST /v1/object/upsert``: creates the object or merges ``properties`` into it, per
        top-level key (docs/api.md#object-upsert-input).

        Args:
            type: the object type, 1-100 characters.
            id: the object's id within its type, 1-500 characters.
            properties: attributes, any JSON object.
            timestamp: Ocelog extension: when these values took effect (an aware ``datetime`` or an
                ISO 8601 string with a zone); default: when the service receives them.
            relationships: Ocelog extension: up to 100 O2O relationships ``{"type", "id",
                "qualifier"?}`` from this object; targets are created on first reference.
            idempotency_key: as in :meth:`send_event`; a repeated upsert answers ``created: False``.

        Returns:
            ``{success, object_id, object_type, external_id, created}``; ``created`` is True when
            this call created the object.

        Raises:
            as :meth:`send_event`.
        """
        body = dumps(object_input(type, id, properties, idempotency_key, timestamp, relationships))
        return _require_dict(self._transport.call("POST", "/v1/object/upsert", body), "POST /v1/object/upsert", "object_id", "created")

    def declare_types(
        self,
        event_types: Optional[Iterable[Mapping[str, Any]]] = None,
        object_types: Optional[Iterable[Mapping[str, Any]]] = None,
        *,
        idempotency_key: Optional[str] = None,
    ) -> Dict[str, Any]:
        """``POST /v1/types`` (Ocelog extension, docs/api.md#declared-types): declares event and object
        types with their attributes, as an OCEL 2.0 log's ``eventTypes`` and ``objectTypes`` do, whether
        or not any event or object uses them. Declarations accumulate: a type declared again gains the
        new attributes, and an attribute declared again takes the later type.

        Args:
            event_types: 0-1,000 declarations ``{"name", "attributes": [{"name", "type"}]}``, each name
                once; ``name`` an event type name (1-200 characters), ``type`` one of OCEL 2.0's
                ``string``, ``time``, ``integer``, ``float``, ``boolean``; 0-200 attributes a type.
            object_types: as ``event_types``, ``name`` an object type (1-100 characters). At least
                one type in the two lists.
            idempotency_key: as in :meth:`send_event`; the same key with the same declarations
                answers ``duplicate: True`` and records nothing.

        Returns:
            ``{success, event_types, object_types, duplicate}``: how many types of each kind the
            request declared, and whether the key was already recorded with this content.

        Raises:
            ValidationError: 422 naming the field and its rule (e.g. ``/event_types/0/name``, a name
                declared twice, an attribute type outside the five, no type at all).
            ConflictError: 409, the key was recorded with other declarations.
            TypeError: a list that is not a list of dicts (e.g. one declaration given without its list).
            others: as :meth:`send_event`.
        """
        body = dumps(types_input(event_types, object_types, idempotency_key))
        return _require_dict(self._transport.call("POST", "/v1/types", body), "POST /v1/types", "event_types", "object_types")

    # -- ingestion: many items ---------------------------------------------------------------------

    def send_events(self, events: Iterable[Mapping[str, Any]], *, on_batch: Optional[Callable[[BatchNotice], None]] = None) -> BatchResult:
        """Records any number of events through ``POST /v1/event/batch``: batches of at most 100,
        read lazily from ``events`` and sent with at most ``concurrency`` in flight.

        Args:
            events: dicts in the API's event input shape ``{event, objects, timestamp?,
                end_timestamp?, properties?, idempotency_key?}``; times may be aware ``datetime``
                values.
            on_batch: called with a :class:`~ocelog.BatchNotice` after each batch request is
                settled (not for items refused before sending, nor for batches never sent after a
                401/403), in the calling thread, one call at a time, as the batches finish; e.g.
                to show the progress of a long import (docs/clients.md#python).

        Returns:
            A :class:`~ocelog.BatchResult`: every index of ``events`` is in ``accepted`` (with its
            event id; ``event_ids`` lists them in input order) or in ``failures``; ``duplicates``
            counts the accepted items whose idempotency keys were already recorded. Never raises
            for an item: a naive datetime fails its item with kind ``invalid``; a 401/403 stops
            the call and sets ``aborted``.

        Raises:
            Exception: whatever ``on_batch`` raises, once the requests in flight have finished; no
                further batch is sent. Batches already answered stay recorded on the service (each
                is durable once answered), and so do the accepted items of those in flight; send
                the items again with the same idempotency keys to resume without recording any
                twice (their answers count them in ``duplicates``).
        """
        return self._bulk(EVENTS, events, normalize_event, on_batch)

    def upsert_objects(self, objects: Iterable[Mapping[str, Any]], *, on_batch: Optional[Callable[[BatchNotice], None]] = None) -> BatchResult:
        """Creates or merges any number of objects through ``POST /v1/object/batch``, as
        :meth:`send_events` (``on_batch`` and its errors too).

        Args:
            objects: dicts ``{type, id, properties?, timestamp?, relationships?, idempotency_key?}``.
            on_batch: as in :meth:`send_events`.

        Returns:
            A :class:`~ocelog.BatchResult` whose ``objects`` lists the object results
            ``{object_id, object_type, external_id, created}`` in input order.

        Note: batches run concurrently, so two updates of one object in different batches merge in
        either order; send such updates in separate calls, or use the queue (one batch at a time).
        """
        return self._bulk(OBJECTS, objects, normalize_object, on_batch)

    def _bulk(
        self,
        endpoint: Endpoint,
        items: Iterable[Mapping[str, Any]],
        normalize: Callable[[Mapping[str, Any]], Dict[str, Any]],
        on_batch: Optional[Callable[[BatchNotice], None]],
    ) -> BatchResult:
        result = BatchResult()
        accepted: List[Tuple[Prepared, Any]] = []
        lock = threading.Lock()

        def batches() -> Iterator[List[Prepared]]:
            batch: List[Prepared] = []
            for index, item in enumerate(items):
                try:
                    body = dumps(normalize(item))
                except (TypeError, ValueError) as error:
                    field = str(error).split(":", 1)[0]
                    path = f"/{field}" if field in ("timestamp", "end_timestamp") else ""
                    with lock:
                        result.failures.append(Failure(index, path, str(error), "invalid", None, (), item, endpoint.kind))
                    continue
                batch.append(Prepared(index, item, body))
                if len(batch) == BATCH_MAX:
                    yield batch
                    batch = []
            if batch:
                yield batch

        def send(batch: List[Prepared]) -> BatchNotice:
            started = time.monotonic()
            counters = Counters()
            outcome: Outcome = send_batch(self._transport, endpoint, batch, counters)
            with lock:
                accepted.extend(outcome.accepted)
                result.failures.extend(outcome.failures)
                result.duplicates += outcome.duplicates
                result.requests += counters.requests
                result.retries += counters.retries
                if outcome.fatal is not None and result.aborted is None:
                    result.aborted = outcome.fatal
            return BatchNotice(endpoint.path, len(batch), len(outcome.accepted), len(outcome.failures), counters.requests, time.monotonic() - started)

        def stopped(batch: List[Prepared]) -> bool:
            with lock:
                reason = result.aborted
                if reason is not None:
                    result.failures.extend(not_sent(batch, endpoint, "aborted", f"not sent: {reason}", None))
            return reason is not None

        # on_batch runs in this (the caller's) thread, one call at a time, so an exception it raises
        # leaves this method: no further batch is started, and leaving the pool's block waits for
        # the requests in flight (their items are recorded by the service all the same).
        def settled(notice: BatchNotice) -> None:
            if on_batch is not None:
                on_batch(notice)

        if self._concurrency == 1:
            for batch in batches():
                if not stopped(batch):
                    settled(send(batch))
        else:
            with concurrent.futures.ThreadPoolExecutor(max_workers=self._concurrency, thread_name_prefix="ocelog-bulk") as pool:
                pending: Set["concurrent.futures.Future[BatchNotice]"] = set()
                for batch in batches():
                    if stopped(batch):
                        continue
                    pending.add(pool.submit(send, batch))
                    done = {f for f in pending if f.done()}
                    if not done and len(pending) >= self._concurrency:
                        done, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                    pending -= done
                    for f in done:
                        settled(f.result())
                for f in concurrent.futures.as_completed(pending):
                    settled(f.result())

        accepted.sort(key=lambda a: a[0].index)
        result.failures.sort(key=lambda f: f.index)
        result.accepted = [Accepted(p.index, v) for p, v in accepted]
        if endpoint is EVENTS:
            result.event_ids = [v for _, v in accepted]
        else:
            result.objects = [v for _, v in accepted]
        result.processed = len(accepted)
        result.failed = len(result.failures)
        return result

    # -- queue and flush ---------------------------------------------------------------------------

    def enqueue_event(
        self,
        event: str,
        objects: Iterable[Mapping[str, Any]],
        *,
        timestamp: Optional[TimeLike] = None,
        end_timestamp: Optional[TimeLike] = None,
        properties: Optional[Mapping[str, Any]] = None,
        idempotency_key: Optional[str] = None,
    ) -> bool:
        """Queues one event (the arguments of :meth:`send_event`) for the background sender, which
        sends it within ``flush_interval`` seconds in a batch of up to ``flush_at``. Without
        ``timestamp`` the event's time is when the service receives it, so pass the time it
        happened.

        Returns:
            True when queued; False when dropped (the queue was full and ``when_full="drop"``).
            With ``when_full="block"`` (default) it waits for room instead.

        Raises:
            ValueError, TypeError: at once, for a naive datetime or a value JSON cannot hold.
            RuntimeError: after :meth:`close`.
        """
        item = event_input(event, objects, timestamp, end_timestamp, properties, idempotency_key)
        return self._sender.put(EVENTS, item, dumps(item))

    def enqueue_object(  # noqa: A002 - the API's field names
        self,
        type: str,  # noqa: A002
        id: str,  # noqa: A002
        properties: Optional[Mapping[str, Any]] = None,
        *,
        timestamp: Optional[TimeLike] = None,
        relationships: Optional[Iterable[Mapping[str, Any]]] = None,
        idempotency_key: Optional[str] = None,
    ) -> bool:
        """Queues one object upsert (the arguments of :meth:`upsert_object`), as :meth:`enqueue_event`."""
        item = object_input(type, id, properties, idempotency_key, timestamp, relationships)
        return self._sender.put(OBJECTS, item, dumps(item))

    def flush(self, timeout: Optional[float] = None) -> bool:
        """Blocks until every item enqueued so far is answered: recorded, or reported to
        ``on_error`` and the log. Sends what is queued without waiting for ``flush_interval``.

        Args:
            timeout: seconds to wait at most; None waits as long as the retries take.

        Returns:
            True when everything was answered, False when ``timeout`` passed first.
        """
        return self._sender.flush(timeout)

    def close(self, timeout: Optional[float] = None) -> bool:
        """Flushes the queue, then stops its thread; later ``enqueue_*`` calls raise RuntimeError.
        Runs by itself at interpreter exit (``atexit``) for a client that queued anything, and when
        a ``with`` block ends. Calling it twice is harmless; the single and bulk calls keep working.

        Returns:
            True when everything enqueued was answered.
        """
        return self._sender.close(timeout)

    def stats(self) -> ClientStats:
        """The client's counters since it was made (see :class:`~ocelog.ClientStats`)."""
        enqueued, queued, recorded, duplicates, failed, dropped = self._sender.counts()
        t = self._transport
        return ClientStats(
            enqueued=enqueued,
            queued=queued,
            recorded=recorded,
            duplicates=duplicates,
            failed=failed,
            dropped=dropped,
            requests=t.requests,
            retries=t.retries,
            rate_limited=t.rate_limited,
            rate_limit_wait_seconds=t.rate_limit_wait_seconds,
        )

    # -- the read side -----------------------------------------------------------------------------

    def process_map(
        self,
        object_types: Optional[Sequence[str]] = None,
        from_: Optional[TimeLike] = None,
        to: Optional[TimeLike] = None,
    ) -> Dict[str, Any]:
        """``GET /v1/process/map``: the object-centric process map, a directly-follows graph per
        object type (after pm4py's OC-DFG). Needs the ``process:read`` scope.

        Args:
            object_types: the object types to include (a str for one); default every type.
            from_: events at or after this time (ISO 8601 string or aware datetime).
            to: events before this time.

        Returns:
            ``{dataset_id, as_of, object_types: [{object_type, objects, activities, edges,
            start_activities, end_activities}]}``; durations are seconds.

        Raises:
            ValidationError: 422 naming the parameter; others as :meth:`health`.
        """
        query: _Query = []
        if isinstance(object_types, str):
            object_types = [object_types]
        for t in object_types or []:
            query.append(("object_type", t))
        _add_times(query, from_, to)
        return _require_dict(self._transport.call("GET", "/v1/process/map", query=query), "GET /v1/process/map", "object_types")

    def get_object(self, type: str, id: str) -> Dict[str, Any]:  # noqa: A002 - the API's field names
        """``GET /v1/process/objects/{type}/{id}``: one object with its attributes and their
        history, its trace and the objects it shares events with.

        Returns:
            ``{dataset_id, as_of, object: {object_id, type, id, attributes, created_at,
            updated_at}, attribute_history, attribute_history_truncated, trace,
            trace_truncated, related, related_truncated, relationships,
            relationships_truncated, incoming_relationships,
            incoming_relationships_truncated}``. Each list holds at most 1,000 items (the latest
            attribute changes, the first events); its ``…_truncated`` flag says when
            more were left out.

        Raises:
            NotFoundError: 404, no such object in the key's dataset; others as :meth:`health`.
        """
        path = f"/v1/process/objects/{urllib.parse.quote(type, safe='')}/{urllib.parse.quote(id, safe='')}"
        return _require_dict(self._transport.call("GET", path), f"GET {path}", "object")

    def find_events(
        self,
        *,
        event_type: Optional[str] = None,
        object_type: Optional[str] = None,
        object_id: Optional[str] = None,
        from_: Optional[TimeLike] = None,
        to: Optional[TimeLike] = None,
        page_size: Optional[int] = None,
    ) -> Iterator[Dict[str, Any]]:
        """``GET /v1/process/events``, every page: the events with their E2O links in
        (``timestamp``, position) order, fetched lazily one page at a time (following
        ``next_cursor``) as the iterator is consumed.

        Args:
            event_type: only events of this type.
            object_type: only events linked to an object of this type.
            object_id: only events linked to the object with this id (the API's ``id``).
            from_, to: events at or after ``from_`` and before ``to``.
            page_size: events per request, 1-1000 (the service's default is 100).

        Yields:
            ``{event_id, event_type, timestamp, end_timestamp, properties, position,
            objects: [{object_id, type, id, qualifier}]}``.

        Raises:
            ValidationError: 422 naming the parameter (raised when iteration starts); others as
            :meth:`health`.
        """
        query: _Query = []
        for name, value in (("event_type", event_type), ("object_type", object_type), ("object_id", object_id)):
            if value is not None:
                query.append((name, value))
        _add_times(query, from_, to)
        if page_size is not None:
            query.append(("limit", str(page_size)))
        return self._pages(query)

    def _pages(self, query: _Query) -> Iterator[Dict[str, Any]]:
        cursor: Optional[str] = None
        while True:
            q = query + ([("cursor", cursor)] if cursor is not None else [])
            page = _require_dict(self._transport.call("GET", "/v1/process/events", query=q), "GET /v1/process/events", "events")
            events = page["events"]
            if not isinstance(events, list):
                raise ProtocolError("GET /v1/process/events: `events` is not a list", 200)
            yield from events
            next_cursor = page.get("next_cursor")
            if not isinstance(next_cursor, str) or next_cursor == "":
                return
            cursor = next_cursor

    def summary(self) -> Dict[str, Any]:
        """``GET /v1/process/summary``: ``{dataset_id, as_of, log_position, events, objects,
        event_types, object_types, e2o, first_event_time, last_event_time}``."""
        return _require_dict(self._transport.call("GET", "/v1/process/summary"), "GET /v1/process/summary", "events")


def _add_times(query: _Query, from_: Optional[TimeLike], to: Optional[TimeLike]) -> None:
    if from_ is not None:
        query.append(("from", iso_time(from_, "from_")))
    if to is not None:
        query.append(("to", iso_time(to, "to")))

