"""One HTTP exchange with the service, and the retries around it (urllib.request only).

A :class:`Transport` is shared by every call of one client, from any thread: it holds the key, at
most ``concurrency`` requests in flight, and the pause that a 429 sets for all of them.
"""

from __future__ import annotations

import gzip
import http.client
import json
import logging
import random as _random
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

from ._errors import (
    APIError,
    AuthenticationError,
    ConflictError,
    ConnectionError,
    FieldError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    ValidationError,
)
from ._retry import OK, RATE_LIMITED, SERVER_ERROR, RetryPolicy, backoff_delay, classify_status, parse_retry_after

log = logging.getLogger("ocelog")


@dataclass(frozen=True)
class Answer:
    """An HTTP answer: status, ``Retry-After`` header, parsed JSON body (None when not JSON), text."""

    status: int
    retry_after: Optional[str]
    body: Any
    text: str


@dataclass(frozen=True)
class NoAnswer:
    """No HTTP answer: ``cause`` is ``network`` or ``timeout``."""

    cause: str
    message: str


@dataclass(frozen=True)
class Exhausted:
    """The retry policy gave up. ``last`` is the last answer (429 or 5xx) or no-answer."""

    last: Union[Answer, NoAnswer]
    message: str


@dataclass(frozen=True)
class RetryNotice:
    """Given to ``on_retry`` before every retry and every 429 wait. Times in seconds.

    Attributes:
        cause: ``rate-limited``, ``server-error``, ``network`` or ``timeout``.
        path: e.g. ``/v1/event/batch``.
        attempt: the attempt that failed, 1-based (429 waits and other failures counted apart).
        delay: how long the client waits before the next attempt.
        items: items in the request (1 for single-item endpoints and reads).
        status: the HTTP status of the failed attempt; None for network errors and timeouts.
        message: what went wrong.
    """

    cause: str
    path: str
    attempt: int
    delay: float
    items: int
    status: Optional[int]
    message: str


class Counters:
    """Requests and retries of one call (bulk calls report them)."""

    def __init__(self) -> None:
        self.requests = 0
        self.retries = 0


def describe_answer(status: int, body: Any, text: str) -> str:
    """One line for a non-2xx answer, e.g. ``422 Validation failed: The event was rejected: ...``."""
    if isinstance(body, dict):
        title = body.get("title") if isinstance(body.get("title"), str) else ""
        detail = body.get("detail") if isinstance(body.get("detail"), str) else ""
        if title or detail:
            return f"{status} {title}{': ' if title and detail else ''}{detail}"
    snippet = text.strip()[:200]
    return f"{status}{' ' + snippet if snippet else ''}"


def problem_field_errors(body: Any) -> List[FieldError]:
    """The ``errors: [{path, message}]`` of a problem body (RFC 9457 extension), if any."""
    if not isinstance(body, dict) or not isinstance(body.get("errors"), list):
        return []
    out = []
    for e in body["errors"]:
        if isinstance(e, dict) and isinstance(e.get("message"), str):
            out.append(FieldError(e["path"] if isinstance(e.get("path"), str) else "", e["message"]))
    return out


def error_for(method: str, path: str, answer: Answer, message: Optional[str] = None) -> APIError:
    """The typed exception of a non-2xx answer: 401 AuthenticationError, 403 PermissionDeniedError,
    404 NotFoundError, 409 ConflictError, 422 ValidationError, 429 RateLimitError, 5xx ServerError, else APIError."""
    text = f"{method} {path}: {message or describe_answer(answer.status, answer.body, answer.text)}"
    problem = answer.body if isinstance(answer.body, dict) else None
    errors = problem_field_errors(answer.body)
    status = answer.status
    if status == 429:
        return RateLimitError(text, status, problem, errors, parse_retry_after(answer.retry_after, time.time()))
    cls = {401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError, 409: ConflictError, 422: ValidationError}.get(status)
    if cls is None:
        cls = ServerError if status >= 500 else APIError
    return cls(text, status, problem, errors)


class Transport:
    """HTTP to one service with one key, shared by all calls and threads of a client."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float,
        policy: RetryPolicy,
        concurrency: int,
        user_agent: str,
        compress: bool,
        compress_min_bytes: int,
        on_retry: Optional[Callable[[RetryNotice], None]],
        random: Callable[[], float] = _random.random,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url
        self._api_key = api_key
        self.timeout = timeout
        self.policy = policy
        self._slots = threading.BoundedSemaphore(concurrency)
        self._user_agent = user_agent
        self._compress = compress
        self._compress_min_bytes = compress_min_bytes
        self._on_retry = on_retry
        self._random = random
        self._sleep = sleep
        self._lock = threading.Lock()
        # time.monotonic() until which no request starts: set by a 429's Retry-After, for the whole client.
        self._paused_until = 0.0
        self.requests = 0
        self.retries = 0
        self.rate_limited = 0
        self.rate_limit_wait_seconds = 0.0
        # No proxy for the service: a proxy from the environment would stand between the client and
        # its own retry rules. The opener is shared; urllib openers are safe across threads.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def _wait_for_pause(self) -> None:
        while True:
            with self._lock:
                wait = self._paused_until - time.monotonic()
            if wait <= 0:
                return
            self._sleep(wait)

    def _pause(self, delay: float) -> None:
        with self._lock:
            until = time.monotonic() + delay
            # Count only the pause that this answer adds beyond one already set.
            self.rate_limit_wait_seconds += max(0.0, until - max(self._paused_until, time.monotonic()))
            self._paused_until = max(self._paused_until, until)

    def exchange(self, method: str, path: str, body: Optional[bytes], query: Sequence[Tuple[str, str]] = ()) -> Union[Answer, NoAnswer]:
        """One HTTP request once the client is not paused, holding one of the ``concurrency`` slots."""
        self._wait_for_pause()
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(list(query))
        headers = {"Authorization": f"Bearer {self._api_key}", "Accept": "application/json", "User-Agent": self._user_agent}
        data = body
        if body is not None:
            headers["Content-Type"] = "application/json"
            if self._compress and len(body) >= self._compress_min_bytes:
                data = gzip.compress(body)
                headers["Content-Encoding"] = "gzip"
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        with self._slots:
            with self._lock:
                self.requests += 1
            try:
                with self._opener.open(request, timeout=self.timeout) as response:
                    return _answer(response.status, response.headers.get("Retry-After"), response.read())
            except urllib.error.HTTPError as error:
                try:
                    raw = error.read()
                except (OSError, http.client.HTTPException):
                    raw = b""
                finally:
                    error.close()
                return _answer(error.code, error.headers.get("Retry-After") if error.headers else None, raw)
            except (socket.timeout, TimeoutError) as error:
                return NoAnswer("timeout", f"no answer within {self.timeout:g} s ({error})")
            except urllib.error.URLError as error:
                if isinstance(error.reason, (socket.timeout, TimeoutError)):
                    return NoAnswer("timeout", f"no answer within {self.timeout:g} s")
                return NoAnswer("network", f"{error.reason}")
            except (OSError, http.client.HTTPException) as error:
                return NoAnswer("network", f"{type(error).__name__}: {error}" if str(error) else type(error).__name__)

    def settle(self, method: str, path: str, body: Optional[bytes], items: int, counters: Counters, query: Sequence[Tuple[str, str]] = ()) -> Union[Answer, Exhausted]:
        """Sends one request until it gets an answer that is not retried, or the policy gives up.

        Returns:
            The first answer that is neither 429 nor 5xx, or :class:`Exhausted`.
        """
        failures = 0
        waits = 0
        while True:
            x = self.exchange(method, path, body, query)
            counters.requests += 1
            status: Optional[int] = None
            if isinstance(x, NoAnswer):
                failures += 1
                cause, message, attempt = x.cause, x.message, failures
                if failures > self.policy.max_retries:
                    return Exhausted(x, f"{message} (after {failures} attempts)")
                delay = backoff_delay(failures, self.policy, self._random)
            else:
                cls = classify_status(x.status)
                status = x.status
                message = describe_answer(x.status, x.body, x.text)
                if cls == RATE_LIMITED:
                    waits += 1
                    with self._lock:
                        self.rate_limited += 1
                    cause, attempt = RATE_LIMITED, waits
                    if waits > self.policy.max_rate_limit_waits:
                        return Exhausted(x, f"{message} (after {waits - 1} waits)")
                    retry_after = parse_retry_after(x.retry_after, time.time())
                    delay = retry_after if retry_after is not None else backoff_delay(waits, self.policy, self._random)
                    # The budget is per key: every request of this client waits, not only this one.
                    self._pause(delay)
                elif cls == SERVER_ERROR:
                    failures += 1
                    cause, attempt = SERVER_ERROR, failures
                    if failures > self.policy.max_retries:
                        return Exhausted(x, f"{message} (after {failures} attempts)")
                    delay = backoff_delay(failures, self.policy, self._random)
                else:
                    return x
            counters.retries += 1
            with self._lock:
                self.retries += 1
            notice = RetryNotice(cause, path, attempt, delay, items, status, message)
            log.debug("ocelog: %s %s: %s; retrying in %.3f s (%s, attempt %d)", method, path, message, delay, cause, attempt)
            if self._on_retry is not None:
                try:
                    self._on_retry(notice)
                except Exception:  # a hook must not break the retries
                    log.exception("ocelog: on_retry raised")
            self._sleep(delay)

    def call(self, method: str, path: str, body: Optional[bytes] = None, query: Sequence[Tuple[str, str]] = ()) -> Any:
        """A single request with retries: the 2xx JSON body.

        Raises:
            APIError: its subclass for the status (see :func:`error_for`), when the answer is not 2xx
                or 429/5xx answers outlasted the policy.
            ConnectionError: when no answer came on any attempt.
        """
        s = self.settle(method, path, body, 1, Counters(), query)
        if isinstance(s, Exhausted):
            if isinstance(s.last, NoAnswer):
                raise ConnectionError(f"{method} {path}: {s.message}", timed_out=s.last.cause == "timeout")
            raise error_for(method, path, s.last, s.message)
        if classify_status(s.status) == OK:
            return s.body
        raise error_for(method, path, s)


def _answer(status: int, retry_after: Optional[str], raw: bytes) -> Answer:
    text = raw.decode("utf-8", errors="replace")
    try:
        body = json.loads(text) if text else None
    except ValueError:
        body = None
    return Answer(status, retry_after, body, text)

