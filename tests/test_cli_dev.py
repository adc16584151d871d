"""``mcpkit dev TARGET``'s options and errors: the URL line, --no-open, --host/--port, a port
in use, a TARGET that does not load, the missing ``http`` extra; and a real process serving
the page until it is stopped."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from browser_support import dev_process
from click.testing import CliRunner
from http_support import request

from mcpkit.cli.commands import cli
from mcpkit.cli.dev import page_origins
from mcpkit.dev.server import DevServer

BUILD_APP = "examples/build_app.py:app"


class Started:
    """What ``mcpkit dev`` handed to uvicorn and the browser instead of serving."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.opened: list[str] = []
        self.served: list[tuple[Any, list[socket.AddressFamily]]] = []
        monkeypatch.setattr("webbrowser.open", self.opened.append)

        def run(server: uvicorn.Server, sockets: list[socket.socket]) -> None:
            self.served.append((server.config.app, [s.family for s in sockets]))
            for sock in sockets:
                sock.close()

        monkeypatch.setattr(uvicorn.Server, "run", run)


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> Started:
    return Started(monkeypatch)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_dev_prints_the_url_opens_it_and_serves_the_dev_server(started: Started) -> None:
    port = _free_port()
    result = CliRunner().invoke(cli, ["dev", BUILD_APP, "--port", str(port)])
    url = f"http://127.0.0.1:{port}/"
    assert (result.exit_code, result.stdout) == (
        0,
        f"mcpkit dev: 'builder' 1.0.0 (2 tools) at {url} (Ctrl-C to stop)\n",
    )
    assert started.opened == [url]
    app, families = started.served[0]
    assert isinstance(app, DevServer)
    assert app.target == BUILD_APP
    assert families == [socket.AF_INET]
    assert app.guards.allowed_origins == frozenset(
        {f"http://127.0.0.1:{port}", f"http://localhost:{port}", f"http://[::1]:{port}"}
    )


def test_a_host_of_its_own_is_one_more_origin_of_the_page() -> None:
    assert page_origins("192.0.2.7", 8000) == [
        "http://127.0.0.1:8000",
        "http://localhost:8000",
        "http://[::1]:8000",
        "http://192.0.2.7:8000",
    ]
    assert page_origins("::1", 1) == ["http://127.0.0.1:1", "http://localhost:1", "http://[::1]:1"]


def test_no_open_leaves_the_browser_alone(started: Started) -> None:
    result = CliRunner().invoke(cli, ["dev", BUILD_APP, "--no-open", "--port", "0"])
    assert result.exit_code == 0
    assert started.opened == []
    assert len(started.served) == 1


def test_port_0_binds_a_free_port_and_prints_it(started: Started) -> None:
    result = CliRunner().invoke(cli, ["dev", BUILD_APP, "--no-open", "--port", "0"])
    printed = int(result.stdout.rsplit(":", 1)[1].split("/")[0])
    assert printed > 0


def test_a_port_in_use_is_exit_2_saying_what_to_do(started: Started) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(cli, ["dev", BUILD_APP, "--no-open", "--port", str(port)])
    assert (result.exit_code, result.stderr) == (
        2,
        f"mcpkit dev: error: cannot listen on 127.0.0.1:{port}: Address already in use "
        "(pass --port N, or --port 0 for any free port)\n",
    )
    assert started.served == []


def test_a_target_that_does_not_load_is_exit_2_with_file_and_line(
    started: Started, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.py"
    source = "from mcpkit import App\napp = App('x')\n\ndef (:\n"
    broken.write_text(source, encoding="utf-8")
    with pytest.raises(SyntaxError) as error:
        compile(source, str(broken), "exec")
    result = CliRunner().invoke(cli, ["dev", f"{broken}:app", "--no-open"])
    assert result.exit_code == 2
    assert result.stderr == f"mcpkit dev: error: {broken}:4: SyntaxError: {error.value.msg}\n"
    assert started.served == []


def test_without_uvicorn_dev_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    result = CliRunner().invoke(cli, ["dev", BUILD_APP, "--no-open"])
    assert (result.exit_code, result.stderr) == (
        2,
        'mcpkit dev: error: the dev page needs uvicorn: pip install "mcpkit[http]"\n',
    )


def test_the_help_lists_the_options() -> None:
    result = CliRunner().invoke(cli, ["dev", "--help"])
    assert result.exit_code == 0
    for option in ("--host TEXT", "--port INTEGER RANGE", "--no-open"):
        assert option in result.stdout


def test_a_real_process_serves_the_page_until_stopped() -> None:
    for served in dev_process(BUILD_APP):
        port = int(served.url.rsplit(":", 1)[1].rstrip("/"))
        page = request(port, "GET", path="/")
        assert (page.status, page.headers["content-type"]) == (200, "text/html; charset=utf-8")
    # uvicorn shuts down gracefully, then re-raises the signal it caught
    assert served.process.returncode == -signal.SIGTERM
    assert "Traceback" not in served.stderr


def test_neither_import_mcpkit_nor_mcpkit_run_loads_the_dev_page() -> None:
    code = (
        "import sys, mcpkit; from mcpkit.cli.commands import cli; cli.get_command(None, 'run');"
        "print(sorted(m for m in sys.modules if m == 'mcpkit.dev' or m.startswith('mcpkit.dev.')"
        " or m == 'mcpkit.cli.dev'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"
