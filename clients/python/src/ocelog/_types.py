"""Results and counters of the Ocelog client."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ._errors import FieldError

#: Why an item was not recorded.
#:
#: - ``invalid``: refused by the client before sending (a naive datetime, a value JSON cannot hold).
#: - ``rejected``: the service rejected the item itself (a failed item of a 200 batch answer).
#: - ``request-rejected``: the whole request was answered with a permanent error (400, 401, 403, 413
#:   for a single item, 415, 422 for the batch envelope, ...).
#: - ``retries-exhausted``: network errors, timeouts, 5xx or 429 outlasted the retry policy.
#: - ``aborted``: never sent, because an earlier request of the call answered 401/403.
#: - ``protocol``: the answer could not be read; the item may or may not be recorded, so it is
#:   not sent again.
#: - ``dropped``: the queue was full and ``when_full="drop"`` (queue only).
FAILURE_KINDS = ("invalid", "rejected", "request-rejected", "retries-exhausted", "aborted", "protocol", "dropped")


@dataclass(frozen=True)
class Failure:
    """One item that was not recorded.

    Attributes:
        index: 0-based position of the item in the caller's iterable (bulk calls), or its 0-based
            enqueue number over the client's life (queue; -1 for a dropped item, which got none).
        path: JSON pointer (RFC 6901) of the first broken field inside the item, e.g.
            ``/timestamp``; empty when the whole request failed.
        message: one line saying why, e.g. ``Event 3: /timestamp: is not a valid ISO 8601 ...``
            (the service's words, with the caller's index).
        kind: one of :data:`FAILURE_KINDS`.
        status: the HTTP status that decided it; None for network errors and items never sent.
        errors: every field error the service named for the item.
        item: the item as given (bulk calls) or as it was queued (queue: the API's JSON shape).
        endpoint: ``event`` or ``object``.
    """

    index: int
    path: str
    message: str
    kind: str
    status: Optional[int] = None
    errors: Tuple[FieldError, ...] = ()
    item: Any = None
    endpoint: str = "event"


@dataclass(frozen=True)
class Accepted:
    """One recorded item: its index in the caller's iterable and what the service answered for it
    (the event id for events; the object result dict ``{object_id, object_type, external_id,
    created}`` for objects)."""

    index: int
    value: Any


@dataclass
class BatchResult:
    """Result of :meth:`Client.send_events` and :meth:`Client.upsert_objects`.

    Every index of the caller's iterable ends up in ``accepted`` or in ``failures``, both in input
    order.

    Attributes:
        processed: items recorded.
        failed: items not recorded (``len(failures)``).
        event_ids: the recorded events' ids in input order (send_events; empty for objects).
        objects: the recorded objects' results in input order (upsert_objects; empty for events).
        failures: the items not recorded, in input order.
        accepted: the recorded items with their indices, in input order.
        requests: HTTP requests made, retries and splits included.
        retries: requests sent again after a 429, a network error, a timeout or a 5xx.
        aborted: the reason when the call stopped early (a 401/403 answer), else None.
        duplicates: of the recorded items, those the service had already recorded under their
            idempotency keys and answered as first recorded (the sum of the batch answers'
            ``duplicates``, docs/api.md#idempotency-keys); they count in ``processed`` too.
    """

    processed: int = 0
    failed: int = 0
    event_ids: List[str] = field(default_factory=list)
    objects: List[Dict[str, Any]] = field(default_factory=list)
    failures: List[Failure] = field(default_factory=list)
    accepted: List[Accepted] = field(default_factory=list)
    requests: int = 0
    retries: int = 0
    aborted: Optional[str] = None
    duplicates: int = 0

    @property
    def ok(self) -> bool:
        """True when every item was recorded."""
        return not self.failures


@dataclass(frozen=True)
class BatchNotice:
    """Given to the ``on_batch`` callback of :meth:`Client.send_events` and
    :meth:`Client.upsert_objects` once a batch request is settled (docs/clients.md#python). Times in
    seconds.

    Attributes:
        path: the endpoint, ``/v1/event/batch`` or ``/v1/object/batch``.
        items: items the batch carried (at most 100).
        accepted: of those, items recorded (duplicates included).
        failed: of those, items not recorded.
        requests: HTTP requests the batch took, retries and 413 splits included.
        duration: seconds from the batch's start to its answer, retries and waits included.
    """

    path: str
    items: int
    accepted: int
    failed: int
    requests: int
    duration: float


@dataclass(frozen=True)
class ClientStats:
    """Counters of one client since it was made (a snapshot).

    Attributes:
        enqueued: items the queue took (dropped ones excluded).
        queued: items waiting in the queue, not yet answered (the batch in flight included).
        recorded: queued items the service has: recorded by this send, or already recorded under
            their idempotency keys (``duplicates`` included).
        failed: queued items that were not recorded (each reported to ``on_error``).
        dropped: items discarded because the queue was full (``when_full="drop"``).
        requests: HTTP requests of every call of the client, retries and splits included.
        retries: requests sent again after a 429, a network error, a timeout or a 5xx.
        rate_limited: 429 answers; each was waited out for its ``Retry-After``.
        rate_limit_wait_seconds: seconds the client paused for 429 answers, summed over them.
        duplicates: of the ``recorded`` items, those the service had already recorded under their
            idempotency keys and answered as first recorded (the batch answers' ``duplicates``,
            docs/api.md#idempotency-keys), e.g. a backlog sent again after a crash;
            ``recorded - duplicates`` items are new in the log. Last, so that the fields before it
            keep their places.
    """

    enqueued: int
    queued: int
    recorded: int
    failed: int
    dropped: int
    requests: int
    retries: int
    rate_limited: int
    rate_limit_wait_seconds: float
    duplicates: int
