"""Queue and flush for live senders: a bounded queue and one background thread that sends it in
batches (at ``flush_at`` items, or once the oldest item has waited ``flush_interval`` seconds), as
the Segment, PostHog and Amplitude SDKs do.

One sender thread sends one batch at a time, in enqueue order, so two updates of one object are
merged in the order they were enqueued. Events of different kinds are never mixed in one batch:
a run of events goes to ``POST /v1/event/batch``, a run of objects to ``POST /v1/object/batch``.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Callable, Deque, List, Optional

from ._batch import EVENTS, OBJECTS, Endpoint, Prepared, send_batch
from ._transport import Counters, Transport
from ._types import Failure

log = logging.getLogger("ocelog")


@dataclass(frozen=True)
class _Queued:
    seq: int
    endpoint: Endpoint
    prepared: Prepared
    at: float


class Sender:
    """The queue of one client and the thread that empties it."""

    def __init__(
        self,
        transport: Transport,
        *,
        flush_at: int,
        flush_interval: float,
        max_queue_size: int,
        when_full: str,
        on_error: Optional[Callable[[Failure], None]],
    ) -> None:
        self._transport = transport
        self._flush_at = flush_at
        self._flush_interval = flush_interval
        self._max = max_queue_size
        self._when_full = when_full
        self._on_error = on_error
        self._cv = threading.Condition()
        self._items: Deque[_Queued] = deque()
        self._seq = 0  # enqueued so far (dropped items excluded); the last item's seq
        self._kinds = {EVENTS.kind: 0, OBJECTS.kind: 0}  # queued items per kind
        self._in_flight_count = 0
        self._flush_target = 0  # send without waiting until this seq is answered
        self._in_flight = 0  # smallest seq of the batch being sent; 0 when none
        self.recorded = 0  # the service has them: new, or already recorded under their keys
        self.duplicates = 0  # of those, already recorded under their keys
        self.failed = 0
        self.dropped = 0
        self._stopping = False
        self._closed = False
        self._thread: Optional[threading.Thread] = None
        self._exit_hook: Optional[Callable[[], None]] = None

    # -- producers ---------------------------------------------------------------------------------

    def put(self, endpoint: Endpoint, item: object, body: bytes) -> bool:
        """Queues one prepared item. Returns False when it was dropped (queue full, ``drop``).

        Raises:
            RuntimeError: after ``close()``.
        """
        with self._cv:
            if self._closed:
                raise RuntimeError("ocelog: the client is closed; enqueue on a new Client")
            while len(self._items) >= self._max:
                if self._when_full == "drop":
                    self.dropped += 1
                    failure = Failure(-1, "", "dropped: the queue was full (when_full='drop')", "dropped", None, (), item, endpoint.kind)
                    break
                self._cv.wait()
                if self._closed:
                    raise RuntimeError("ocelog: the client was closed while waiting for room in the queue")
            else:
                self._seq += 1
                self._items.append(_Queued(self._seq, endpoint, Prepared(self._seq - 1, item, body), time.monotonic()))
                self._kinds[endpoint.kind] += 1
                self._cv.notify_all()
                self._start()
                return True
        self._report([failure])
        return False

    # -- flush and close ---------------------------------------------------------------------------

    def flush(self, timeout: Optional[float] = None) -> bool:
        """Blocks until every item enqueued so far is answered (recorded or reported as failed).

        Returns:
            True when they were, False when ``timeout`` seconds passed first.
        """
        if self._thread is not None and threading.current_thread() is self._thread:
            raise RuntimeError("ocelog: flush() and close() cannot be called from on_error (the sender thread waits for them)")
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cv:
            target = self._seq
            self._flush_target = max(self._flush_target, target)
            self._cv.notify_all()
            while self._unanswered_from() <= target:
                if self._thread is None or not self._thread.is_alive():
                    return False
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is not None and wait <= 0:
                    return False
                self._cv.wait(wait)
            return True

    def close(self, timeout: Optional[float] = None) -> bool:
        """Flushes, then stops the thread; later ``put`` calls raise. Safe to call twice.

        Returns:
            True when everything enqueued was answered before the thread stopped.
        """
        flushed = self.flush(timeout)
        with self._cv:
            self._closed = True
            self._stopping = True
            thread = self._thread
            self._cv.notify_all()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        if self._exit_hook is not None:
            atexit.unregister(self._exit_hook)
            self._exit_hook = None
        return flushed

    def counts(self) -> "tuple[int, int, int, int, int, int]":
        """(enqueued, waiting or in flight, recorded, duplicates, failed, dropped), read together, so
        ``recorded - duplicates`` never counts a batch's duplicates before they are added."""
        with self._cv:
            return self._seq, len(self._items) + self._in_flight_count, self.recorded, self.duplicates, self.failed, self.dropped

    # -- the sender thread -------------------------------------------------------------------------

    def _start(self) -> None:
        # Called with the lock held.
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="ocelog-sender", daemon=True)
        self._thread.start()
        # Daemon thread (so it never holds the interpreter up by itself), closed at exit: the
        # hook holds the sender weakly, so an unused client can still be collected.
        ref = weakref.ref(self)

        def at_exit() -> None:
            sender = ref()
            if sender is not None:
                sender.close()

        self._exit_hook = at_exit
        atexit.register(at_exit)

    def _take(self) -> Optional[List[_Queued]]:
        """Waits for a batch to send, then takes it: up to ``flush_at`` items of the oldest item's
        kind, in enqueue order. It waits until ``flush_at`` items of one kind are queued, the oldest
        has waited ``flush_interval`` seconds, a flush asks for it, or the client closes. None when
        closing with nothing left."""
        with self._cv:
            while True:
                if self._items:
                    head = self._items[0]
                    age = time.monotonic() - head.at
                    full = max(self._kinds.values()) >= self._flush_at
                    if full or self._stopping or self._flush_target >= head.seq or age >= self._flush_interval:
                        batch: List[_Queued] = []
                        rest: Deque[_Queued] = deque()
                        for q in self._items:
                            if q.endpoint is head.endpoint and len(batch) < self._flush_at:
                                batch.append(q)
                            else:
                                rest.append(q)
                        self._items = rest
                        self._kinds[head.endpoint.kind] -= len(batch)
                        self._in_flight = batch[0].seq
                        self._in_flight_count = len(batch)
                        self._cv.notify_all()  # room in the queue
                        return batch
                    self._cv.wait(self._flush_interval - age)
                elif self._stopping:
                    return None
                else:
                    self._cv.wait()

    def _unanswered_from(self) -> int:
        """The smallest seq not yet answered (every smaller one is). Called with the lock held."""
        low = self._seq + 1
        if self._items:
            low = min(low, self._items[0].seq)
        if self._in_flight:
            low = min(low, self._in_flight)
        return low

    def _run(self) -> None:
        while True:
            batch = self._take()
            if batch is None:
                return
            endpoint = batch[0].endpoint
            failures: List[Failure]
            try:
                outcome = send_batch(self._transport, endpoint, [q.prepared for q in batch], Counters())
                failures = outcome.failures
                recorded = len(outcome.accepted)
                duplicates = outcome.duplicates
            except Exception as error:  # never let the thread die: report the batch instead
                log.exception("ocelog: sending a queued batch failed")
                failures = [
                    Failure(q.prepared.index, "", f"{endpoint.path}: {type(error).__name__}: {error}", "protocol", None, (), q.prepared.item, endpoint.kind)
                    for q in batch
                ]
                recorded = duplicates = 0
            with self._cv:
                self.recorded += recorded
                self.duplicates += duplicates
                self.failed += len(failures)
            self._report(failures)
            with self._cv:
                self._in_flight = 0
                self._in_flight_count = 0
                self._cv.notify_all()

    def _report(self, failures: List[Failure]) -> None:
        for f in failures:
            log.error("ocelog: queued %s #%d not recorded (%s): %s", f.endpoint, f.index, f.kind, f.message)
            if self._on_error is not None:
                try:
                    self._on_error(f)
                except Exception:  # a hook must not stop the sender
                    log.exception("ocelog: on_error raised")

