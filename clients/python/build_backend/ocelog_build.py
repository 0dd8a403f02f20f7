"""PEP 517 build backend of the ocelog package: setuptools' own (``setuptools.build_meta``), plus a
fallback for interpreters that have setuptools but not the ``wheel`` package, which setuptools
before 70.1 needs to build any wheel. With no package index to fetch ``wheel`` from,
``pip install ./clients/python --no-build-isolation`` would otherwise fail there.

The fallback builds the same pure-Python wheel (PEP 427, tag ``py3-none-any``) with the standard
library: setuptools' ``egg_info`` writes the core metadata from pyproject.toml, and the files of
``src/ocelog`` are zipped with a RECORD of their SHA-256 digests.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional

from setuptools import build_meta as _setuptools

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "ocelog"

get_requires_for_build_sdist = _setuptools.get_requires_for_build_sdist
build_sdist = _setuptools.build_sdist


def _has_wheel() -> bool:
    try:
        import wheel  # noqa: F401
    except ImportError:
        return False
    return True


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    """Nothing beyond setuptools: the fallback needs no ``wheel``."""
    return _setuptools.get_requires_for_build_wheel(config_settings) if _has_wheel() else []


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None, metadata_directory: Optional[str] = None) -> str:
    """Builds the wheel into ``wheel_directory``; returns its file name."""
    if _has_wheel():
        return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
    return _build_wheel_stdlib(Path(wheel_directory))


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _build_wheel_stdlib(out: Path) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-c", "from setuptools import setup; setup()", "-q", "egg_info", "--egg-base", tmp],
            cwd=ROOT,
            check=True,
        )
        metadata = (Path(tmp) / f"{PACKAGE}.egg-info" / "PKG-INFO").read_bytes()
    fields = dict(line.split(": ", 1) for line in metadata.decode().splitlines() if ": " in line and not line.startswith(" "))
    name, version = fields["Name"], fields["Version"]
    dist_info = f"{name}-{version}.dist-info"
    files: Dict[str, bytes] = {}
    src = ROOT / "src" / PACKAGE
    for path in sorted(src.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".typed"):
            files[f"{PACKAGE}/{path.relative_to(src).as_posix()}"] = path.read_bytes()
    files[f"{dist_info}/METADATA"] = metadata
    files[f"{dist_info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: ocelog_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{dist_info}/top_level.txt"] = f"{PACKAGE}\n".encode()
    record = "".join(f"{n},{_digest(d)},{len(d)}\n" for n, d in files.items()) + f"{dist_info}/RECORD,,\n"
    files[f"{dist_info}/RECORD"] = record.encode()
    filename = f"{name}-{version}-py3-none-any.whl"
    os.makedirs(out, exist_ok=True)
    with zipfile.ZipFile(out / filename, "w", zipfile.ZIP_DEFLATED) as whl:
        for n, d in files.items():
            whl.writestr(n, d)
    return filename
