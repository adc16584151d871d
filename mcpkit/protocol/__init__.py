"""The protocol layers: the JSON-RPC envelope, MCP versions and the I/O-free server."""
