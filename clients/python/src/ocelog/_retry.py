"""Retry rules of the client, the same as the TypeScript client's (docs/api.md#errors, #batches).

- 2xx: read the body.
- 429: wait out ``Retry-After`` (RFC 9110 § 10.2.3) and send again; every request of the client
  pauses with it, since the rate budget is per key.
- 5xx, network errors and timeouts: exponential back-off with jitter, at most ``max_retries`` times.
- 413: the body must shrink; a batch is split in two.
- 401 and 403: the key cannot do this; no other request with it will do better.
- any other status (400, 404, 415, 422, ...): permanent for every item of the request.

Pure functions; the clock and the random source are parameters.
"""

from __future__ import annotations

import random as _random
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Callable, Optional

OK = "ok"
RATE_LIMITED = "rate-limited"
SERVER_ERROR = "server-error"
TOO_LARGE = "too-large"
FATAL = "fatal"
REJECTED = "rejected"


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds of the retries. Times in seconds.

    Attributes:
        max_retries: retries after network errors, timeouts and 5xx answers (so at most
            ``max_retries + 1`` attempts); 429 waits are counted apart.
        backoff_base: the first back-off's nominal delay.
        backoff_max: the largest nominal delay.
        max_rate_limit_waits: 429 answers one request may wait out before it fails.
    """

    max_retries: int = 7
    backoff_base: float = 0.25
    backoff_max: float = 20.0
    max_rate_limit_waits: int = 100


def classify_status(status: int) -> str:
    """What to do with an HTTP status: one of ``ok``, ``rate-limited``, ``server-error``,
    ``too-large``, ``fatal`` (401/403) or ``rejected`` (any other status)."""
    if 200 <= status < 300:
        return OK
    if status == 429:
        return RATE_LIMITED
    if status == 413:
        return TOO_LARGE
    if status in (401, 403):
        return FATAL
    if status >= 500:
        return SERVER_ERROR
    return REJECTED


def backoff_delay(attempt: int, policy: RetryPolicy, random: Callable[[], float] = _random.random) -> float:
    """Exponential back-off with "equal jitter": the cap doubles per attempt from ``backoff_base``
    up to ``backoff_max``, and the delay is drawn uniformly from [cap/2, cap).

    Args:
        attempt: the attempt that just failed, 1-based.
        policy: the bounds.
        random: a source of numbers in [0, 1).

    Returns:
        The delay in seconds.
    """
    exponent = min(max(0, attempt - 1), 30)
    cap = min(policy.backoff_max, policy.backoff_base * (2**exponent))
    return cap / 2 + (cap / 2) * random()


def parse_retry_after(value: Optional[str], now: float) -> Optional[float]:
    """Reads a ``Retry-After`` header (RFC 9110 § 10.2.3): delay-seconds or an HTTP-date.

    Args:
        value: the header value, or None when absent.
        now: the current time in seconds since the epoch (for the HTTP-date form).

    Returns:
        The delay in seconds (never negative), or None when absent or unreadable.
    """
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(int(text))
    try:
        at = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if at is None or at.tzinfo is None:
        return None
    return max(0.0, at.timestamp() - now)
