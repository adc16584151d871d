"""What the harness measures. Each scenario visits every server in turn, rotating who goes
first, and returns ``Samples`` (measurements by server name) for ``plan`` to turn into rows."""
