"""Exceptions of the Ocelog client.

Every error of a request is an :class:`OcelogError`. Answers of the service with a non-2xx status
are :class:`APIError` subclasses carrying the RFC 9457 problem details the service sends
(``application/problem+json``: ``type``, ``title``, ``status``, ``detail``, ``request_id`` and, for
validation failures, ``errors: [{path, message}]`` with JSON pointers). Requests that got no answer
are :class:`ConnectionError`.

Bulk calls (``send_events``, ``upsert_objects``) and the queue never raise for an item: they report
it as a :class:`~ocelog.Failure` instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Tuple


@dataclass(frozen=True)
class FieldError:
    """One broken rule of a rejected request or item.

    Attributes:
        path: JSON pointer (RFC 6901) of the field inside the item, e.g. ``/timestamp`` or
            ``/objects/0/id``; for read endpoints, the query parameter's name. Empty when the
            service named no field.
        message: the rule it breaks, in the service's words.
    """

    path: str
    message: str


class OcelogError(Exception):
    """Base class of every error the client raises for a request.

    Attributes:
        message: one line saying what failed.
        status: the HTTP status of the last answer, or None when there was no answer.
    """

    def __init__(self, message: str, status: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class APIError(OcelogError):
    """The service answered with an error status that is not retried (or no longer retried).

    Raised as is for statuses without a more specific class (400 malformed JSON, 404 unknown route,
    413 body too large for a single item, 415 wrong content type).

    Attributes:
        status: the HTTP status.
        problem: the parsed problem+json body (empty dict when the body was not JSON).
        errors: field errors from the problem's ``errors`` member (RFC 9457 extension used by Ocelog).
        request_id: the ``request_id`` of the problem, to find the request in the service's log.
    """

    status: int

    def __init__(self, message: str, status: int, problem: Optional[Mapping[str, Any]] = None, errors: Sequence[FieldError] = ()) -> None:
        super().__init__(message, status)
        self.status = status
        self.problem: Mapping[str, Any] = dict(problem) if problem is not None else {}
        self.errors: Tuple[FieldError, ...] = tuple(errors)
        rid = self.problem.get("request_id")
        self.request_id: Optional[str] = rid if isinstance(rid, str) else None


class AuthenticationError(APIError):
    """401: the API key is missing, malformed, unknown or revoked (docs/api.md#authentication-and-scopes)."""


class PermissionDeniedError(APIError):
    """403: the key is valid but its scopes do not reach the endpoint (e.g. ``ingest:write``)."""


class NotFoundError(APIError):
    """404: no such route, or no such object (``get_object``)."""


class ConflictError(APIError):
    """409: the item's idempotency key was already recorded in the dataset with other content; nothing
    was recorded. Use a new key for new content."""


class ValidationError(APIError):
    """422: the request breaks a field rule; ``errors`` names every broken field and its rule."""


class RateLimitError(APIError):
    """429 answers outlasted ``max_rate_limit_waits`` waits of one request.

    Attributes:
        retry_after: seconds the last answer's ``Retry-After`` asked for, or None.
    """

    def __init__(
        self,
        message: str,
        status: int = 429,
        problem: Optional[Mapping[str, Any]] = None,
        errors: Sequence[FieldError] = (),
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message, status, problem, errors)
        self.retry_after = retry_after


class ServerError(APIError):
    """5xx answers (e.g. 503 when the log cannot record) outlasted ``max_retries`` retries."""


class ConnectionError(OcelogError):  # noqa: A001 - the documented name; it is ocelog.ConnectionError, not the builtin
    """No answer: the connection failed or dropped, or no answer came within ``timeout`` seconds,
    on every attempt (``max_retries`` retries with back-off).

    Attributes:
        timed_out: True when the last attempt ended by the timeout.
    """

    def __init__(self, message: str, timed_out: bool = False) -> None:
        super().__init__(message, None)
        self.timed_out = timed_out


class ProtocolError(OcelogError):
    """A 2xx answer that the client cannot read (not JSON, or not the documented shape)."""
