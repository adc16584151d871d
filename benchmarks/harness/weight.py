"""How heavy each server is: the modules it imports, and (``--peers``) the size and the
dependency closure of its install."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.process import READ_TIMEOUT, ROOT, BenchError, run_bounded
from harness.specs import ServerSpec, child_env
from harness.venvs import Venv, ensure_venv


def modules_imported(spec: ServerSpec) -> int:
    code = f"import sys; {spec.imports}; print(len(sys.modules))"
    done = subprocess.run(
        [spec.python, "-c", code],
        env=child_env(spec),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=READ_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise BenchError(f"{spec.name}: counting modules failed:\n{done.stderr[-2000:]}")
    return int(done.stdout.split()[-1])


# Run in a cache venv: its distributions and the dependency closure of some of them (pip's
# vendored ``packaging`` evaluates the markers; the driver itself stays stdlib only).
CLOSURE_SCRIPT = """
import json, re, sys
from importlib import metadata
from pip._vendor.packaging.requirements import Requirement
def norm(name): return re.sub(r"[-_.]+", "-", name).lower()
installed = {norm(d.metadata["Name"]): d for d in metadata.distributions()}
closure, seen, todo = set(), set(), [(norm(n), "") for n in sys.argv[1:]]
while todo:
    name, extra = todo.pop()
    if (name, extra) in seen or name not in installed:
        continue
    seen.add((name, extra))
    closure.add(name)
    for text in installed[name].requires or []:
        req = Requirement(text)
        if req.marker is None or req.marker.evaluate({"extra": extra}):
            todo += [(norm(req.name), e) for e in ("", *sorted(req.extras))]
print(json.dumps({"installed": sorted(installed), "closure": sorted(closure)}))
"""
CORE_ROOTS = ("pydantic", "click", "docstring-parser")


def distributions(venv: Venv, roots: Sequence[str]) -> tuple[set[str], set[str]]:
    """The distributions installed in ``venv`` and the closure of ``roots`` among them."""
    out = run_bounded(
        [venv.python, "-c", CLOSURE_SCRIPT, *roots], READ_TIMEOUT, f"listing {venv.folder}"
    )
    found = json.loads(out)
    return set(found["installed"]), set(found["closure"])


def tree_size(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_file() and not path.is_symlink():
                total += path.stat().st_size
    return total


@dataclass
class Weight:
    """The installs measured with ``--peers``, by server name."""

    size_mib: dict[str, float] = field(default_factory=dict)
    count: dict[str, float] = field(default_factory=dict)
    closures: dict[str, list[str]] = field(default_factory=dict)
    core_extra: list[str] | None = None  # mcpkit's distributions beyond its allowed core

    def add(self, spec: ServerSpec, venv: Venv, bare_dists: set[str], bare_size: int) -> None:
        """Weigh ``spec``'s install; ``BenchError`` if ``venv`` holds more than its closure."""
        installed, closure = distributions(venv, venv.roots)
        extra = installed - bare_dists - closure
        if extra:
            raise BenchError(f"{venv.folder} holds more than {spec.name}'s closure: {extra}")
        self.size_mib[spec.name] = (tree_size(venv.site_packages()) - bare_size) / (1 << 20)
        self.count[spec.name] = float(len(closure))
        self.closures[spec.name] = sorted(closure)
        if spec.name == "mcpkit":
            _, allowed = distributions(venv, CORE_ROOTS)
            self.core_extra = sorted(closure - allowed - {"mcpkit"})

    def core_verdict(self) -> tuple[bool, str] | None:
        """Whether mcpkit's install holds only its allowed core, and what else if not."""
        if self.core_extra is None:
            return None
        extra = self.core_extra
        return not extra, "only those" if not extra else "also " + ", ".join(extra)


def weights(specs: Sequence[ServerSpec]) -> Weight:
    """Installed size (site-packages minus a bare venv's) and distributions of each closure."""
    bare = ensure_venv("bare", [], [])
    bare_dists, _ = distributions(bare, [])
    bare_size = tree_size(bare.site_packages())
    out = Weight()
    for spec in specs:
        if spec.venv is not None:
            out.add(spec, spec.venv, bare_dists, bare_size)
    return out
