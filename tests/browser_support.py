"""Headless Chromium driven by Selenium, offline, and ``mcpkit dev`` as a real process.

Chromium and chromedriver come from the Debian packages ``chromium`` and ``chromium-driver``
(``.ci/run`` installs them). Missing: the test skips, saying why, except under ``CI=true``,
where it fails. Screenshots go to ``$MCPKIT_ARTIFACTS`` (default: a folder under the system's
temporary directory), never into the repository.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ARGUMENTS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
)
WAIT_SECONDS = 20.0
URL_LINE = re.compile(r"^mcpkit dev: .* at (http://\S+) \(Ctrl-C to stop\)$")
T = TypeVar("T")


def artifacts() -> Path:
    """Where screenshots go: outside the repository."""
    folder = Path(
        os.environ.get("MCPKIT_ARTIFACTS") or Path(tempfile.gettempdir(), "mcpkit-artifacts")
    )
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def require_chromium() -> None:
    """Skip (fail under ``CI=true``) when Chromium or chromedriver is missing."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if not missing:
        return
    reason = f"{' and '.join(missing)} missing (apt-get install chromium chromium-driver)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI=true requires it")
    pytest.skip(reason)


def chrome(profile: Path) -> Any:
    """A headless Chromium with a fresh profile; Selenium Manager stays offline."""
    os.environ["SE_OFFLINE"] = "true"
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ARGUMENTS:
        options.add_argument(argument)
    options.add_argument(f"--user-data-dir={profile}")
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


def wait_for(driver: Any, condition: Callable[[Any], T], message: str) -> T:
    """The first truthy value of ``condition(driver)``, polled until it comes."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # An element found while the page re-renders may go stale: look again.
    ignored = (NoSuchElementException, StaleElementReferenceException)
    waiting = WebDriverWait(driver, WAIT_SECONDS, poll_frequency=0.05, ignored_exceptions=ignored)
    result: T = waiting.until(condition, message)
    return result


class DevProcess:
    """``mcpkit dev TARGET --no-open --port 0`` in its own process group; ``url`` is the page."""

    def __init__(self, target: str, cwd: Path = ROOT) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.stderr = ""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcpkit", "dev", target, "--no-open", "--port", "0"],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        found = URL_LINE.match(line)
        if found is None:
            self.stop()
            raise AssertionError(f"mcpkit dev printed {line!r}; stderr: {self.stderr}")
        self.url = found.group(1)

    def stop(self) -> None:
        self.process.terminate()
        try:
            _, self.stderr = self.process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, self.stderr = self.process.communicate()


def dev_process(target: str, cwd: Path = ROOT) -> Iterator[DevProcess]:
    served = DevProcess(target, cwd)
    try:
        yield served
    finally:
        served.stop()
