"""``dllint rule CODE`` prints a rule's docs; ``dllint rule --all`` lists every rule."""

from __future__ import annotations

import json
import sys

import click

from dllint.rules import all_rules, rule_by_code


def rule_table() -> str:
    """The README table: generated from the rules' own metadata."""
    rows = ["| Code | Name | Default | Fix | What it catches |", "|---|---|---|---|---|"]
    for r in all_rules():
        rows.append(f"| {r.code} | {r.name} | {'on' if r.default else 'off'} | {r.fix} | {r.summary} |")
    return "\n".join(rows) + "\n"


@click.command(short_help="Explain a rule, or list every rule with --all.")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule with its default and fix safety.")
@click.option("--output-format", type=click.Choice(["text", "json", "markdown"]), default="text")
def rule(code, show_all, output_format):
    """Explain a rule (e.g. `dllint rule DL101`), or list them all with --all."""
    if show_all:
        rules = all_rules()
        if output_format == "json":
            click.echo(json.dumps([_as_dict(r) for r in rules], indent=2))
        elif output_format == "markdown":
            click.echo(rule_table(), nl=False)
        else:
            width = max(len(r.name) for r in rules)
            for r in rules:
                default = "on " if r.default else "off"
                click.echo(f"{r.code}  {r.name:<{width}}  {default}  fix: {r.fix:<6}  {r.summary}")
        return
    if not code:
        click.echo("dllint: error: give a rule code (e.g. DL101) or --all", err=True)
        sys.exit(2)
    r = rule_by_code(code)
    if r is None:
        click.echo(f"dllint: error: unknown rule code `{code}`", err=True)
        sys.exit(2)
    if output_format == "json":
        click.echo(json.dumps(_as_dict(r), indent=2))
    else:
        click.echo(r.render_docs(), nl=False)


def _as_dict(r) -> dict:
    return {
        "code": r.code,
        "name": r.name,
        "default": r.default,
        "fix": r.fix,
        "severity": r.severity,
        "summary": r.summary,
        "explanation": r.render_docs(),
        "url": r.url,
    }
