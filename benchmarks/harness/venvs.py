"""Pinned virtual environments in a cache folder outside the repository, created once."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from harness.process import ROOT, run_bounded

CACHE = Path(os.environ.get("MCPKIT_BENCH_CACHE") or Path.home() / ".cache" / "mcpkit-bench")
INSTALL_TIMEOUT = 900.0  # seconds for one ``pip install`` (downloads included)


@dataclass(frozen=True)
class Venv:
    """A virtual environment in the cache; ``roots`` are the distributions it is for."""

    folder: Path
    roots: tuple[str, ...]

    @property
    def python(self) -> str:
        if os.name == "nt":
            return str(self.folder / "Scripts" / "python.exe")
        return str(self.folder / "bin" / "python")

    def site_packages(self) -> Path:
        found = sorted(self.folder.glob("lib/python*/site-packages")) or [
            self.folder / "Lib" / "site-packages"
        ]
        return found[0]


def ensure_venv(
    name: str, requirements: Sequence[str], roots: Sequence[str], salt: str = ""
) -> Venv:
    """``CACHE/<name>-<hash>`` with ``requirements`` installed; created once, then reused.

    The hash covers the requirements, the interpreter and ``salt``; a folder without its
    ``.complete`` marker (an interrupted install) is rebuilt, and stale siblings of the same
    name are removed.
    """
    key = json.dumps([sys.base_prefix, platform.python_version(), *requirements, salt])
    folder = CACHE / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
    venv = Venv(folder, tuple(roots))
    marker = folder / ".complete"
    if marker.exists():
        return venv
    for stale in CACHE.glob(f"{name}-????????????"):
        shutil.rmtree(stale, ignore_errors=True)
    started = time.perf_counter()
    shown = " ".join(Path(r).name if os.sep in r else r for r in requirements) or "nothing"
    print(f"installing {shown} into {folder} ...", flush=True)
    install(venv, requirements, shown)
    marker.write_text(json.dumps(list(requirements)) + "\n")
    print(f"  done in {time.perf_counter() - started:.0f} s", flush=True)
    return venv


def install(venv: Venv, requirements: Sequence[str], shown: str) -> None:
    """Create ``venv`` and pip-install ``requirements`` into it (each step bounded)."""
    folder = venv.folder
    run_bounded([sys.executable, "-m", "venv", str(folder)], 300, f"creating {folder}")
    if requirements:
        pip = [venv.python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input"]
        run_bounded([*pip, "-q", *requirements], INSTALL_TIMEOUT, f"installing {shown}")


def installed_version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def shared_pins() -> list[str]:
    """pydantic and uvicorn at the versions mcpkit runs with: the same for every server."""
    return [
        f"{dist}=={version}"
        for dist in ("pydantic", "uvicorn")
        if (version := installed_version(dist)) is not None
    ]


def install_key() -> str:
    """What the mcpkit install is rebuilt for: pyproject.toml (its dependencies) and the version.

    Not every source edit: the closure is what the weight compares, and mcpkit's own files
    change it by a few KiB.
    """
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes())
    digest.update((ROOT / "mcpkit" / "_version.py").read_bytes())
    return digest.hexdigest()
