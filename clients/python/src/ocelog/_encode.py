"""Turning the caller's values into the API's JSON (docs/api.md#event-input, #object-upsert-input,
#declared-types)."""

from __future__ import annotations

import json
import uuid
from datetime import date, datetime, timezone
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union

TimeLike = Union[str, datetime]


def iso_time(value: TimeLike, name: str) -> str:
    """A time as the API takes it: ISO 8601 with ``Z`` or an offset.

    Args:
        value: an ISO 8601 string (sent as is; the service checks it) or a timezone-aware
            ``datetime`` (sent in UTC with millisecond precision, e.g. ``2024-05-01T08:00:00.000Z``;
            the service stores milliseconds).
        name: the field's name, for the error message.

    Raises:
        ValueError: for a naive ``datetime`` (no ``tzinfo``): its zone would be a guess.
        TypeError: for anything else (a ``date``, a number, ...).
    """
    if isinstance(value, str):
        return value
    if isinstance(value, datetime):
        if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
            raise ValueError(
                f"{name}: a naive datetime ({value.isoformat()}) is refused, since its time zone would be a guess; "
                "pass a timezone-aware datetime (e.g. datetime.now(timezone.utc)) or an ISO 8601 string with Z or an offset"
            )
        return value.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    raise TypeError(f"{name}: expected an ISO 8601 string or a timezone-aware datetime, got {type(value).__name__}")


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso_time(value, "datetime in properties")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (set, frozenset)):
        return list(value)
    raise TypeError(f"a value of type {type(value).__name__} cannot be sent as JSON")


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON; aware datetimes become ISO 8601 in UTC, dates ISO dates.

    Raises:
        ValueError: for a naive datetime anywhere in ``value``, or a float that is NaN or infinite.
        TypeError: for a value JSON cannot hold.
    """
    return json.dumps(value, default=_json_default, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def new_idempotency_key() -> str:
    """A new idempotency key: a random UUID (version 4, from the standard library; version 7
    arrives in ``uuid`` with Python 3.14). Its 122 random bits make a collision within a dataset
    negligible, and the service needs uniqueness only, not order."""
    return str(uuid.uuid4())


def _with_key(item: Dict[str, Any], idempotency_key: Optional[str]) -> Dict[str, Any]:
    """``item`` with its idempotency key: the caller's, or a new one. Set once, before the item's
    first send, so every retry carries the same key and the service records the item once (README
    § Exactly once)."""
    if idempotency_key is not None:
        item["idempotency_key"] = idempotency_key
    elif item.get("idempotency_key") is None:
        item["idempotency_key"] = new_idempotency_key()
    return item


def event_input(
    event: str,
    objects: Iterable[Mapping[str, Any]],
    timestamp: Optional[TimeLike] = None,
    end_timestamp: Optional[TimeLike] = None,
    properties: Optional[Mapping[str, Any]] = None,
    idempotency_key: Optional[str] = None,
) -> Dict[str, Any]:
    """The event input shape ``{event, objects, timestamp?, end_timestamp?, properties?,
    idempotency_key}``; the key is ``idempotency_key`` or a new one.

    Raises:
        ValueError, TypeError: as :func:`iso_time`, for ``timestamp`` and ``end_timestamp``.
    """
    item: Dict[str, Any] = {"event": event, "objects": [dict(o) for o in objects]}
    if timestamp is not None:
        item["timestamp"] = iso_time(timestamp, "timestamp")
    if end_timestamp is not None:
        item["end_timestamp"] = iso_time(end_timestamp, "end_timestamp")
    if properties is not None:
        item["properties"] = dict(properties)
    return _with_key(item, idempotency_key)


def object_input(  # noqa: A002 - the API's field names
    type: str,  # noqa: A002
    id: str,  # noqa: A002
    properties: Optional[Mapping[str, Any]] = None,
    idempotency_key: Optional[str] = None,
    timestamp: Optional[TimeLike] = None,
    relationships: Optional[Iterable[Mapping[str, Any]]] = None,
) -> Dict[str, Any]:
    """The object upsert input shape ``{type, id, properties?, timestamp?, relationships?,
    idempotency_key}``; the key is ``idempotency_key`` or a new one.

    Raises:
        ValueError, TypeError: as :func:`iso_time`, for ``timestamp``.
    """
    item: Dict[str, Any] = {"type": type, "id": id}
    if properties is not None:
        item["properties"] = dict(properties)
    if timestamp is not None:
        item["timestamp"] = iso_time(timestamp, "timestamp")
    if relationships is not None:
        item["relationships"] = [dict(r) for r in relationships]
    return _with_key(item, idempotency_key)


def _declarations(name: str, value: Iterable[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    """A list of type declarations copied as given (the service checks their fields).

    Raises:
        TypeError: when ``value`` is a single declaration or a string instead of a list of them, or an
            element is not a mapping; the message names ``name`` and the element's index.
    """
    if isinstance(value, (str, bytes, Mapping)):
        raise TypeError(f"{name}: expected a list of declarations {{name, attributes}}, got a {type(value).__name__}")
    out = []
    for i, t in enumerate(value):
        if not isinstance(t, Mapping):
            raise TypeError(f"{name}[{i}]: a declaration must be a dict {{name, attributes: [{{name, type}}]}}, got {type(t).__name__}")
        out.append(dict(t))
    return out


def types_input(
    event_types: Optional[Iterable[Mapping[str, Any]]] = None,
    object_types: Optional[Iterable[Mapping[str, Any]]] = None,
    idempotency_key: Optional[str] = None,
) -> Dict[str, Any]:
    """The body of ``POST /v1/types`` (docs/api.md#declared-types): ``{event_types?, object_types?,
    idempotency_key}``, each declaration ``{name, attributes: [{name, type}]}`` copied as given (the
    service checks them); a list left as None is left out. The key is ``idempotency_key`` or a new one.

    Raises:
        TypeError: as :func:`_declarations`.
    """
    item: Dict[str, Any] = {}
    if event_types is not None:
        item["event_types"] = _declarations("event_types", event_types)
    if object_types is not None:
        item["object_types"] = _declarations("object_types", object_types)
    return _with_key(item, idempotency_key)

def normalize_event(item: Mapping[str, Any]) -> Dict[str, Any]:
    """An event given as a dict in the API's shape, with datetimes turned into ISO strings and an
    idempotency key unless it has one.

    Raises:
        ValueError, TypeError: as :func:`iso_time`; TypeError when ``item`` is not a mapping.
    """
    if not isinstance(item, Mapping):
        raise TypeError(f"an event must be a dict in the API's event input shape, got {type(item).__name__}")
    out = dict(item)
    for name in ("timestamp", "end_timestamp"):
        if name in out and out[name] is not None:
            out[name] = iso_time(out[name], name)
    return _with_key(out, None)


def normalize_object(item: Mapping[str, Any]) -> Dict[str, Any]:
    """An object upsert given as a dict in the API's shape, with its ``timestamp`` (if any) as an
    ISO string and an idempotency key unless it has one.

    Raises:
        ValueError, TypeError: as :func:`iso_time`; TypeError when ``item`` is not a mapping.
    """
    if not isinstance(item, Mapping):
        raise TypeError(f"an object must be a dict in the API's object upsert shape, got {type(item).__name__}")
    out = dict(item)
    if out.get("timestamp") is not None:
        out["timestamp"] = iso_time(out["timestamp"], "timestamp")
    return _with_key(out, None)
