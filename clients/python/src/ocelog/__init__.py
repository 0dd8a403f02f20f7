"""Ocelog: the Python client of the Ocelog ingestion API for OCEL 2.0 object-centric events.

Standard library only. See :class:`Client`::

    import ocelog

    with ocelog.Client("ocl_...", "http://localhost:8080") as client:
        client.send_event("place order", [{"type": "order", "id": "o-1", "qualifier": "target"}],
                          timestamp="2024-05-01T10:00:00Z")

Errors: every request error is an :class:`OcelogError`: :class:`AuthenticationError` (401),
:class:`PermissionDeniedError` (403), :class:`NotFoundError` (404), :class:`ConflictError` (409, an idempotency key reused with other content), :class:`ValidationError` (422,
with field errors), :class:`RateLimitError` (429s outlasted the waits), :class:`ServerError` (5xx
outlasted the retries), other statuses :class:`APIError`; :class:`ConnectionError` when no answer
came; :class:`ProtocolError` for an unreadable 2xx answer.
"""

from ._batch import BATCH_MAX
from ._errors import (
    APIError,
    AuthenticationError,
    ConflictError,
    ConnectionError,
    FieldError,
    NotFoundError,
    OcelogError,
    PermissionDeniedError,
    ProtocolError,
    RateLimitError,
    ServerError,
    ValidationError,
)
from ._retry import RetryPolicy
from ._transport import RetryNotice
from ._types import FAILURE_KINDS, Accepted, BatchNotice, BatchResult, ClientStats, Failure
from .client import Client, __version__

__all__ = [
    "BATCH_MAX",
    "FAILURE_KINDS",
    "APIError",
    "Accepted",
    "AuthenticationError",
    "BatchNotice",
    "BatchResult",
    "Client",
    "ClientStats",
    "ConflictError",
    "ConnectionError",
    "Failure",
    "FieldError",
    "NotFoundError",
    "OcelogError",
    "PermissionDeniedError",
    "ProtocolError",
    "RateLimitError",
    "RetryNotice",
    "RetryPolicy",
    "ServerError",
    "ValidationError",
    "__version__",
]
