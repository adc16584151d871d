"""A small calculator app, with no lifespan of its own."""

from __future__ import annotations

from mcpkit import App

app = App("calc", "1.0")


@app.tool
def add(a: float, b: float) -> float:
    """The sum of two numbers."""
    return a + b


@app.tool
def multiply(a: float, b: float) -> float:
    """The product of two numbers."""
    return a * b
