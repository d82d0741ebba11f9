"""The `repro-lint` command line: click commands only, the work happens in api.py."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from repro_lint.api import lint_paths
from repro_lint.config import ConfigError, load_settings
from repro_lint.discovery import MissingPath
from repro_lint.output import json_output, text
from repro_lint.pages import page_text
from repro_lint.probe.cli import probe
from repro_lint.registry import REGISTRY

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(values: tuple[str, ...]) -> list[str]:
    """`--select A,B --select C` -> [A, B, C]."""
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


def _fail(message: str) -> None:
    click.echo(f"repro-lint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="repro-lint")
def main() -> None:
    """Find and fix the hidden randomness that makes PyTorch training runs irreproducible."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--select", multiple=True, help="Only these codes or prefixes (comma-separated).")
@click.option("--extend-select", multiple=True, help="Add these codes or prefixes to the selection.")
@click.option("--ignore", multiple=True, help="Skip these codes or prefixes.")
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that may slow training or change behaviour.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; change nothing.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--statistics", is_flag=True, help="Count findings by code instead of listing them.")
@click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False), help="Configuration file.")
@click.option("--quiet", "-q", is_flag=True, help="Print findings only, no summary.")
def check(
    paths: tuple[Path, ...],
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    output_format: str,
    exit_zero: bool,
    statistics: bool,
    config_file: Path | None,
    quiet: bool,
) -> None:
    """Lint PATHS (default: the current folder)."""
    targets = list(paths) or [Path(".")]
    try:
        settings = load_settings(config_file, targets[0]).with_overrides(
            _codes(select) if select else None, _codes(extend_select), _codes(ignore)
        )
        result = lint_paths(targets, settings, fix=fix, unsafe_fixes=unsafe_fixes, diff=diff)
    except (ConfigError, MissingPath) as error:
        _fail(str(error))
        return

    if diff:
        click.echo("".join(result.diffs), nl=False)
        sys.exit(EXIT_FINDINGS if result.diffs and not exit_zero else EXIT_OK)

    if output_format == "json":
        click.echo(json_output.render(result.findings))
    elif statistics:
        for row in text.statistics(result.findings):
            click.echo(row)
    else:
        for finding in result.findings:
            click.echo(text.finding_line(finding))
        if not quiet:
            click.echo(text.summary(result.findings, result.fixed if fix else None, unsafe_fixes))
    sys.exit(EXIT_FINDINGS if result.findings and not exit_zero else EXIT_OK)


@main.command()
def rules() -> None:
    """List every rule: code, name, default, fix."""
    rows = [
        (code, rule.name, "on" if rule.default_enabled else "off", rule.fix_availability.value)
        for code, rule in sorted(REGISTRY.items())
    ]
    header = ("code", "name", "default", "fix")
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(4)]
    for row in [header, *rows]:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


@main.command()
@click.argument("code")
def explain(code: str) -> None:
    """Print the documentation page of rule CODE."""
    code = code.upper()
    if code not in REGISTRY:
        _fail(f"unknown rule code {code!r}; `repro-lint rules` lists them")
    page = page_text(code)
    if page is None:
        _fail(f"no documentation page found for {code}")
    click.echo(page, nl=False)


main.add_command(probe)
