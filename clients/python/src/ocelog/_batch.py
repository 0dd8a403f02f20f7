"""Batches of at most 100 items (docs/api.md#limits) through ``POST /v1/event/batch`` and
``POST /v1/object/batch``, and how their answers account for every item (docs/api.md#batches).

A whole-request failure means none of its items was recorded, so the same items are sent again;
item failures inside a 200 batch answer are validation failures and permanent, so they are
reported, never re-sent; accepted items are never sent again. A 413 splits the batch in two.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ._errors import FieldError
from ._retry import FATAL, OK, TOO_LARGE, classify_status
from ._transport import Counters, Exhausted, NoAnswer, Transport, describe_answer, problem_field_errors
from ._types import Failure

#: Items per batch request (docs/api.md#limits).
BATCH_MAX = 100

_LEADING_INDEX = re.compile(r"^(Event|Object) (\d+):")


@dataclass(frozen=True)
class Endpoint:
    """One batch endpoint: its path, the envelope's field, and the answer's list of accepted values."""

    kind: str
    path: str
    envelope: bytes
    values_field: str
    is_value: Callable[[Any], bool]


def _is_object_result(v: Any) -> bool:
    return (
        isinstance(v, dict)
        and isinstance(v.get("object_id"), str)
        and isinstance(v.get("object_type"), str)
        and isinstance(v.get("external_id"), str)
        and isinstance(v.get("created"), bool)
    )


EVENTS = Endpoint("event", "/v1/event/batch", b'{"events":[', "event_ids", lambda v: isinstance(v, str))
OBJECTS = Endpoint("object", "/v1/object/batch", b'{"objects":[', "objects", _is_object_result)


@dataclass(frozen=True)
class Prepared:
    """An item ready to send: its index (the caller's), the item as given, and its JSON bytes."""

    index: int
    item: Any
    body: bytes


@dataclass
class Outcome:
    """What one batch request (with its retries and splits) did to its items."""

    accepted: List[Tuple[Prepared, Any]] = field(default_factory=list)
    failures: List[Failure] = field(default_factory=list)
    fatal: Optional[str] = None
    duplicates: int = 0


@dataclass(frozen=True)
class _Reading:
    accepted: List[Tuple[int, Any]]
    failed: List[Tuple[int, str, List[FieldError]]]
    duplicates: int


def read_batch_answer(body: Any, n: int, values_field: str, is_value: Callable[[Any], bool]) -> Optional[_Reading]:
    """Matches a 200 batch answer to the ``n`` items sent.

    Failed positions come from ``error_details[].index`` and from the ``Event N:`` / ``Object N:``
    prefix of the ``errors`` strings; every other position is accepted and takes the next value of
    ``values_field`` (``event_ids`` or ``objects``, which list the accepted items in request order).

    Returns:
        None when the body does not have the batch shape or does not account for every item.
    """
    if not isinstance(body, dict):
        return None
    values = body.get(values_field)
    errors = body.get("errors") or []
    details = body.get("error_details") or []
    if not isinstance(values, list) or not all(is_value(v) for v in values) or not isinstance(errors, list) or not isinstance(details, list):
        return None
    failed: Dict[int, Tuple[List[str], List[FieldError]]] = {}
    for d in details:
        if not isinstance(d, dict) or not isinstance(d.get("index"), int) or isinstance(d.get("index"), bool) or not 0 <= d["index"] < n:
            return None
        path = d.get("path") if isinstance(d.get("path"), str) else ""
        message = d.get("message") if isinstance(d.get("message"), str) else ""
        failed.setdefault(d["index"], ([], []))[1].append(FieldError(path, message))
    for line in errors:
        if not isinstance(line, str):
            return None
        m = _LEADING_INDEX.match(line)
        if m is None:
            continue
        position = int(m.group(2))
        if position >= n:
            return None
        failed.setdefault(position, ([], []))[0].append(line)
    accepted: List[Tuple[int, Any]] = []
    it = iter(values)
    for position in range(n):
        if position in failed:
            continue
        try:
            accepted.append((position, next(it)))
        except StopIteration:
            return None
    if next(it, None) is not None:
        return None
    out = []
    for position in sorted(failed):
        lines, errs = failed[position]
        reason = "; ".join(lines) if lines else "; ".join(f"{e.path}: {e.message}" if e.path else e.message for e in errs)
        out.append((position, reason, errs))
    return _Reading(accepted, out, _count(body.get("duplicates")))


def _count(value: Any) -> int:
    """A whole number >= 0 as JSON gives it (``3`` or ``3.0``, not ``true``), else 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float) and not value.is_integer():
        return 0
    return int(value) if value >= 0 else 0


def not_sent(batch: List[Prepared], endpoint: Endpoint, kind: str, message: str, status: Optional[int], errors: Sequence[FieldError] = ()) -> List[Failure]:
    """Failures for every item of a batch that failed as a whole."""
    path = errors[0].path if errors else ""
    return [Failure(p.index, path, message, kind, status, tuple(errors), p.item, endpoint.kind) for p in batch]


def send_batch(transport: Transport, endpoint: Endpoint, batch: List[Prepared], counters: Counters) -> Outcome:
    """One batch of at most 100 items, with retries; a 413 splits it in two halves sent one after the other."""
    outcome = Outcome()
    body = endpoint.envelope + b",".join(p.body for p in batch) + b"]}"
    s = transport.settle("POST", endpoint.path, body, len(batch), counters)
    if isinstance(s, Exhausted):
        status = None if isinstance(s.last, NoAnswer) else s.last.status
        outcome.failures = not_sent(batch, endpoint, "retries-exhausted", f"{endpoint.path}: {s.message}", status)
        return outcome
    cls = classify_status(s.status)
    if cls == OK:
        reading = read_batch_answer(s.body, len(batch), endpoint.values_field, endpoint.is_value)
        if reading is None:
            message = f"{endpoint.path}: the 200 answer does not account for the items sent; they may or may not be recorded"
            outcome.failures = not_sent(batch, endpoint, "protocol", message, s.status)
            return outcome
        outcome.duplicates = reading.duplicates
        for position, value in reading.accepted:
            outcome.accepted.append((batch[position], value))
        for position, reason, errs in reading.failed:
            sent = batch[position]
            # The service numbers items within the request; name them by the caller's index instead.
            reason = _LEADING_INDEX.sub(lambda m, i=sent.index: f"{m.group(1)} {i}:", reason, count=1)
            path = errs[0].path if errs else ""
            outcome.failures.append(Failure(sent.index, path, reason, "rejected", s.status, tuple(errs), sent.item, endpoint.kind))
        return outcome
    if cls == TOO_LARGE and len(batch) > 1:
        half = (len(batch) + 1) // 2
        for part in (batch[:half], batch[half:]):
            o = send_batch(transport, endpoint, part, counters)
            outcome.accepted.extend(o.accepted)
            outcome.failures.extend(o.failures)
            outcome.duplicates += o.duplicates
            outcome.fatal = outcome.fatal or o.fatal
        return outcome
    described = f"{endpoint.path}: {describe_answer(s.status, s.body, s.text)}"
    if cls == FATAL:
        outcome.fatal = described
    outcome.failures = not_sent(batch, endpoint, "request-rejected", described, s.status, problem_field_errors(s.body))
    return outcome
