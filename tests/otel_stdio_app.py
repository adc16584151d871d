"""The traced App as a deployment runs it (``mcpkit run tests/otel_stdio_app.py:app``): the
OpenTelemetry SDK installed as the global tracer provider, recording into memory; its
``spans`` tool answers what was recorded so far, as JSON."""

from __future__ import annotations

import json

from opentelemetry import trace
from otel_support import Recorder, build, hex_ids, summary

recorder = Recorder()
trace.set_tracer_provider(recorder.provider)
app = build()  # no tracer_provider: the global one


@app.tool
def spans() -> str:
    """The spans recorded so far, with their trace and parent ids."""
    return json.dumps([{**summary(span), "ids": hex_ids(span)} for span in recorder.spans()])
