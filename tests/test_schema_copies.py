"""The official schemas in tests/schemas/ are the published files, byte for byte: each matches
the sha256 and size its README records (with the source, version and licence of each)."""

from __future__ import annotations

import hashlib
import re

from distribution_support import SCHEMAS

ROW = re.compile(r"^\| `([^`]+\.json)` \|.*\| `([0-9a-f]{64})` \| (\d+) \|", re.MULTILINE)


def test_each_schema_matches_its_recorded_hash_and_size() -> None:
    readme = (SCHEMAS / "README.md").read_text(encoding="utf-8")
    recorded = {path: (digest, int(size)) for path, digest, size in ROW.findall(readme)}
    found = {
        path.relative_to(SCHEMAS).as_posix(): (
            hashlib.sha256(path.read_bytes()).hexdigest(),
            path.stat().st_size,
        )
        for path in SCHEMAS.rglob("*.json")
    }
    assert found == recorded
    assert sorted(recorded) == [
        "mcp-registry/server.schema.2025-09-29.json",
        "mcp-registry/server.schema.2025-12-11.json",
        "mcpb/mcpb-manifest-v0.2.schema.json",
        "mcpb/mcpb-manifest-v0.3.schema.json",
        "mcpb/mcpb-manifest-v0.4.schema.json",
    ]
    for licence in ("mcp-registry/LICENSE", "mcpb/LICENSE"):
        assert "Permission is hereby granted, free of charge" in (SCHEMAS / licence).read_text(
            encoding="utf-8"
        )
