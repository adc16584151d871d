"""The parts ``examples/composed.py`` includes: each a complete app of its own."""
