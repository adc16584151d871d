"""``mcpkit check TARGET``: compile every definition and lint what clients would receive."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import click

from mcpkit.app import App
from mcpkit.cli._io import load
from mcpkit.docgen.lint import Finding, lint
from mcpkit.docgen.providers import TARGETS, provider_findings

__all__ = ["KINDS", "check", "compiled", "provider_lint"]

KINDS = (
    ("tool", "tools"),
    ("resource", "resources"),
    ("resource template", "resource_templates"),
    ("prompt", "prompts"),
)
"""(kind, the App attribute holding them by name); attributes an App lacks are skipped."""


@click.command()
@click.argument("target")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@click.option(
    "--target",
    "providers",
    multiple=True,
    type=click.Choice(list(TARGETS)),
    help="Instead of the lint, report per tool and parameter what this model provider's "
    "tool-calling API refuses (errors) or may lose (warnings); repeatable. portable: the "
    "three non-strict ones.",
)
def check(target: str, strict: bool, providers: tuple[str, ...]) -> None:
    """Compile and lint every definition of the App that TARGET names.

    Errors (exit 1): missing tool or prompt descriptions, invalid or duplicate names and
    titles, definitions that fail to compile. Warnings (exit 0 unless --strict): undocumented
    parameters, long names, schema shapes that trip common clients, a large schema-token total.
    With --target, errors are what that provider refuses (400 for the whole request).
    """
    definitions, failures = compiled(load("check", target))
    found = provider_lint(definitions, providers) if providers else lint(definitions)
    findings = failures + found
    for finding in findings:
        click.echo(str(finding))
    errors = sum(f.error for f in findings)
    warnings = len(findings) - errors
    count = sum(len(items) for items in definitions.values()) + len(failures)
    totals = ", ".join(_plural(n, noun) for n, noun in ((errors, "error"), (warnings, "warning")))
    click.echo(f"checked {_plural(count, 'definition')}: {totals}")
    if errors or (strict and warnings):
        raise click.exceptions.Exit(1)


def provider_lint(
    definitions: dict[str, list[dict[str, Any]]], providers: Iterable[str]
) -> list[Finding]:
    """Each tool's published ``inputSchema`` read against the providers' rules tables."""
    return [
        Finding(found.refused, f"tool {tool.get('name')!r}", str(found))
        for tool in definitions.get("tool", [])
        for provider in providers
        for found in provider_findings(tool.get("inputSchema") or {}, provider)
    ]


def compiled(app: App) -> tuple[dict[str, list[dict[str, Any]]], list[Finding]]:
    """Every definition that compiles, by kind, and an error for each that does not."""
    definitions: dict[str, list[dict[str, Any]]] = {}
    failures: list[Finding] = []
    for kind, attribute in KINDS:
        items: Iterable[Any] = getattr(app, attribute, {}).values()
        definitions[kind] = []
        for item in items:
            try:
                definitions[kind].append(item.definition)
            except Exception as exc:  # a user's definition failing is a finding, not a crash
                failures.append(_failure(kind, item, exc))
    return definitions, failures


def _failure(kind: str, item: Any, exc: Exception) -> Finding:
    subject = f"{kind} {getattr(item, 'name', None) or getattr(item, 'uri', '?')!r}"
    message = str(exc).removeprefix(f"{subject}: ")
    return Finding(True, subject, f"does not compile: {message}")


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
