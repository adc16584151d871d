"""The in-process scenario: ``python compile_bench.py APP_MODULE_PATH COUNT``.

Generates ``COUNT`` typed functions (untimed), then times the module's ``build(functions)``:
everything an SDK does to turn them into complete ``tools/list`` definitions. Prints JSON with
the wall-clock and the process CPU time (steadier on a shared machine).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

from bench_tools import generated


def main() -> None:
    path, count = Path(sys.argv[1]), int(sys.argv[2])
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    functions = generated(count)
    started, cpu_started = time.perf_counter(), time.process_time()
    definitions = module.build(functions)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    if len(definitions) != count or any("inputSchema" not in d for d in definitions):
        sys.exit(f"{path.name}: build() returned {len(definitions)} definitions, not {count}")
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "count": count}))


if __name__ == "__main__":
    main()
