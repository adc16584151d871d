"""Rows, targets and verdicts; the Markdown tables a run prints and the JSON it may write."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.specs import Samples


@dataclass(frozen=True)
class Target:
    """A bound on subject / ``versus``: ``at_most`` (lower is better) or ``at_least``."""

    bound: float
    at_most: bool = True
    versus: str = "floor"

    def text(self, named: bool) -> str:
        bound = f"{'<=' if self.at_most else '>='} {self.bound:g}x"
        return f"{bound} {self.versus}" if named else bound

    def met(self, ratio: float) -> bool:
        return ratio <= self.bound if self.at_most else ratio >= self.bound


@dataclass
class Row:
    metric: str
    unit: str
    values: dict[str, float]
    spread: dict[str, str] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)
    samples: dict[str, list[float]] = field(default_factory=dict)


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def fmt(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def median_row(metric: str, unit: str, samples: Samples, targets: Sequence[Target] = ()) -> Row:
    samples = {name: s for name, s in samples.items() if s}
    values = {name: statistics.median(s) for name, s in samples.items()}
    spread = {name: f"{fmt(min(s))}-{fmt(max(s))}" for name, s in samples.items()}
    return Row(metric, unit, values, spread, list(targets), samples)


def percentile_rows(tool: str, samples: Samples, targets: Sequence[Target]) -> list[Row]:
    return [
        Row(f"{tool} p{q}", "us", {n: percentile(s, q) for n, s in samples.items()}, {}, list(t))
        for q, t in ((50, targets), (99, ()))
    ]


def ratio(row: Row, subject: str, baseline: str) -> float | None:
    low = row.values.get(baseline)
    high = row.values.get(subject)
    return high / low if high is not None and low else None


@dataclass(frozen=True)
class Verdict:
    table: str
    metric: str
    target: str
    ratio: float
    met: bool


def verdicts(title: str, row: Row, names: list[str]) -> list[Verdict]:
    """The row's targets whose reference server ran, each judged."""
    out = []
    for target in row.targets:
        r = ratio(row, names[0], target.versus) if target.versus in names else None
        if r is not None:
            text = target.text(named=True)
            out.append(Verdict(title, f"{row.metric} ({row.unit})", text, r, target.met(r)))
    return out


def render(title: str, rows: list[Row], names: list[str]) -> list[str]:
    """A Markdown table: each server's value [spread], the subject's ratio to each other."""
    subject, others = names[0], names[1:]
    header = ["metric", *names, *(f"{subject}/{name}" for name in others), "target", ""]
    table = [header, *(cells(title, row, names) for row in rows)]
    return [f"## {title}", "", *markdown(table), ""]


def cells(title: str, row: Row, names: list[str]) -> list[str]:
    """One row of ``render``'s table."""
    subject, others = names[0], names[1:]
    named = len(others) > 1  # with one reference the target column need not name it
    out = [f"{row.metric} ({row.unit})"]
    for name in names:
        value = row.values.get(name)
        extra = f" [{row.spread[name]}]" if name in row.spread else ""
        out.append("n/a" if value is None else fmt(value) + extra)
    for name in others:
        r = ratio(row, subject, name)
        out.append("n/a" if r is None else f"{r:.2f}x")
    judged = verdicts(title, row, names)
    out.append("; ".join(v.target if named else v.target.rsplit(" ", 1)[0] for v in judged))
    out.append("; ".join("PASS" if v.met else "MISS" for v in judged))
    return out


def markdown(table: list[list[str]]) -> list[str]:
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    lines = []
    for i, line in enumerate(table):
        lines.append(
            "| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |"
        )
        if i == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return lines


def render_targets(judged: list[Verdict], core: tuple[bool, str] | None) -> list[str]:
    table = [["scenario", "metric", "target (mcpkit / server)", "ratio", ""]]
    for v in judged:
        table.append([v.table.split(" (")[0], v.metric, v.target, f"{v.ratio:.2f}x"])
        table[-1].append("PASS" if v.met else "MISS")
    if core is not None:
        met, detail = core
        table.append(["Weight", "core install", "pydantic, click, docstring-parser", detail])
        table[-1].append("PASS" if met else "MISS")
    passed = sum(v.met for v in judged) + (core is not None and core[0])
    total = len(judged) + (core is not None)
    return ["## Targets", "", *markdown(table), "", f"{passed} of {total} targets met", ""]


def row_json(row: Row, names: list[str]) -> dict[str, Any]:
    return {
        "metric": row.metric,
        "unit": row.unit,
        "values": row.values,
        "ratios": {name: ratio(row, names[0], name) for name in names[1:]},
        "targets": [
            {"target": v.target, "ratio": v.ratio, "met": v.met} for v in verdicts("", row, names)
        ],
        "samples": row.samples,
    }


@dataclass
class Results:
    """Every table of a run so far, as JSON, and the verdicts on its targets."""

    names: list[str]  # the servers, the subject first
    tables: list[dict[str, Any]] = field(default_factory=list)
    judged: list[Verdict] = field(default_factory=list)

    def add(self, title: str, rows: list[Row], servers: list[str] | None = None) -> list[str]:
        """Record a table (of ``servers``, default the run's); its Markdown lines."""
        names = servers or self.names
        self.tables.append({"table": title, "rows": [row_json(row, names) for row in rows]})
        self.judged += [v for row in rows for v in verdicts(title, row, names)]
        return render(title, rows, names)
