"""Fixtures: the BUILT Ocelog service as a real process (``node dist/src/cli/main.js serve``) on a
free port of 127.0.0.1, with its own temporary OCELOG_DATA_DIR, and API keys made with its CLI
(``keys create --json``), as the TypeScript e2e tests do. Needs ``npm run build`` (``npm test``
builds first); without dist/ the tests that use the service fail with that message.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import pytest

REPO = Path(__file__).resolve().parents[3]
CLI = REPO / "dist" / "src" / "cli" / "main.js"
SRC = Path(__file__).resolve().parent.parent / "src"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    """One running service. ``url``; ``cli(args)`` runs the CLI on its data dir; ``create_key()``."""

    def __init__(self, env: Optional[Dict[str, str]] = None) -> None:
        if not CLI.exists():
            raise RuntimeError(f"{CLI} is missing: run `npm run build` in {REPO} first (npm test does)")
        self.data_dir = tempfile.mkdtemp(prefix="ocelog-pytest-")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "OCELOG_DATA_DIR": self.data_dir, "PORT": str(self.port), "HOST": "127.0.0.1", "LOG_LEVEL": "warn", **(env or {})}
        self._stderr = open(os.path.join(self.data_dir, "service.stderr"), "w+")
        self.start()

    def start(self) -> None:
        """Starts ``ocelog serve`` on this port and data dir; returns once it answers HTTP."""
        self.process = subprocess.Popen(["node", str(CLI), "serve"], cwd=REPO, env=self.env, stdout=subprocess.DEVNULL, stderr=self._stderr)
        deadline = time.monotonic() + 30
        while True:
            if self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"ocelog serve exited ({self.process.returncode}) before it listened: {self.stderr()}")
            try:
                urllib.request.urlopen(self.url + "/v1/health", timeout=2)
                break
            except urllib.error.HTTPError:
                break  # any HTTP answer (401 without a key) means it listens
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"ocelog serve did not listen on {self.url} within 30 s: {self.stderr()}") from None
                time.sleep(0.05)

    def stderr(self) -> str:
        self._stderr.flush()
        with open(self._stderr.name) as f:
            return f.read()

    def cli(self, args: List[str]) -> str:
        """``ocelog <args>`` on the service's data dir; its stdout. Raises when it exits non-zero."""
        done = subprocess.run(["node", str(CLI), *args], cwd=REPO, env=self.env, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"ocelog {' '.join(args)} exited {done.returncode}: {done.stderr}")
        return done.stdout

    def create_key(self, name: str = "t", scopes: Optional[List[str]] = None) -> Dict[str, str]:
        """A key for a new dataset: ``{key_id, key, dataset_id, dataset_name, scopes}``."""
        args = ["keys", "create", "--name", name, "--json"]
        if scopes is not None:
            args += ["--scopes", ",".join(scopes)]
        return json.loads(self.cli(args))

    def replay(self, dataset_id: str) -> List[dict]:
        """The dataset's records in log order: ``ocelog replay --dataset ID --json`` (NDJSON)."""
        return [json.loads(line) for line in self.cli(["replay", "--dataset", dataset_id, "--json"]).splitlines() if line.strip()]

    def kill(self) -> None:
        """SIGKILL, as a crash: the data dir stays, ``start()`` brings the service back."""
        self.process.kill()
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._stderr.close()
        shutil.rmtree(self.data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def service() -> Iterator[Service]:
    """The service with its default limits, shared by the tests of the session (each test makes its own key and dataset)."""
    s = Service()
    yield s
    s.stop()


@pytest.fixture()
def key(service: Service) -> Dict[str, str]:
    """A fresh key for a new dataset of the shared service."""
    return service.create_key()
