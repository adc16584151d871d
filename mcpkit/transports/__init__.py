"""Transports: framing only (stdio; Streamable HTTP arrives with its issue)."""
