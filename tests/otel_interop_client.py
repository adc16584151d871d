"""The official ``mcp`` client with the OpenTelemetry SDK set up globally, in a process of its
own (a global provider is set once per process): it calls ``add`` on the traced stdio server
(``tests/otel_stdio_app.py``) and prints, as JSON, its own spans and the server's."""

from __future__ import annotations

import json
from typing import Any

from interop_support import run, stdio_params
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from opentelemetry import trace
from otel_support import Recorder, hex_ids

recorder = Recorder()
trace.set_tracer_provider(recorder.provider)


async def scenario() -> dict[str, Any]:
    params = stdio_params("tests/otel_stdio_app.py:app")
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("add", {"a": 1, "b": 2})
        served = await session.call_tool("spans", {})
    text = served.content[0].text  # type: ignore[union-attr]
    return {
        "client": [[span.name, *hex_ids(span)] for span in recorder.spans()],
        "server": [[span["name"], *span["ids"]] for span in json.loads(text)],
    }


if __name__ == "__main__":
    print(json.dumps(run(scenario)))
