"""The median of several recorded runs, target by target.

    python benchmarks/run.py --peers --json run1.json   # three times, interleaving the servers
    python benchmarks/median.py run1.json run2.json run3.json

A target is judged on the median of its ratios over the runs (one ratio per run, each taken
within that run, so a machine that is slower in one run than another moves both servers).
Prints a Markdown table: every run's ratio, the median, and PASS or MISS.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Key = tuple[str, str, str]  # scenario, metric, target text ("<= 0.15x mcp")


def ratios(run: dict[str, Any]) -> dict[Key, float]:
    """Every judged target of one run's JSON, by scenario, metric and target."""
    found: dict[Key, float] = {}
    for table in run["tables"]:
        scenario = table["table"].split(" (")[0]
        for row in table["rows"]:
            metric = f"{row['metric']} ({row['unit']})"
            for judged in row["targets"]:
                found[(scenario, metric, judged["target"])] = judged["ratio"]
    return found


def met(target: str, value: float) -> bool:
    """``target`` is the harness's text: an operator, a bound with ``x``, the server's name."""
    operator, bound = target.split()[:2]
    limit = float(bound.rstrip("x"))
    return value <= limit if operator == "<=" else value >= limit


def table(runs: Sequence[dict[Key, float]]) -> list[str]:
    keys = list(dict.fromkeys(key for run in runs for key in run))
    header = ["scenario", "metric", "target", *(f"run {i + 1}" for i in range(len(runs)))]
    lines = [
        "| " + " | ".join([*header, "median", ""]) + " |",
        "|" + "---|" * (len(header) + 2),
    ]
    passed = 0
    for key in keys:
        values = [run.get(key) for run in runs]
        present = [v for v in values if v is not None]
        middle = statistics.median(present)
        ok = met(key[2], middle)
        passed += ok
        cells = ["n/a" if v is None else f"{v:.2f}x" for v in values]
        verdict = "PASS" if ok else "MISS"
        lines.append("| " + " | ".join([*key, *cells, f"{middle:.2f}x", verdict]) + " |")
    lines += ["", f"{passed} of {len(keys)} targets met by the median of {len(runs)} runs"]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="JSON files written by run.py --json")
    args = parser.parse_args(argv)
    runs = [ratios(json.loads(path.read_text())) for path in args.runs]
    print("\n".join(table(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
