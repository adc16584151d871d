"""The benchmark harness behind ``benchmarks/run.py``, one concern per module.

    process     where things are, the bound on any read, ``BenchError``, bounded commands
    venvs       pinned virtual environments in the cache (the peers' installs)
    specs       ``ServerSpec``: the servers under test, their environment, visiting order
    driver      ``Server``: one spawned server spoken to over its stdin/stdout
    scenarios/  what is measured: ``stdio`` (start-up, latency, throughput), ``compile``, ``http``
    weight      modules imported, installed size and dependency closure
    machine     the machine a run happened on: load, steal time, thread hop, versions
    report      rows, targets and verdicts; Markdown tables and the JSON summary
    plan        how much to measure (``FULL``/``QUICK``) and which tables, with which targets

A new measurement is a module under ``scenarios/`` and one table in ``plan``.
"""
