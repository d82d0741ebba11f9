"""The `repro-lint` command line: click commands only, the work happens in api.py."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from repro_lint.api import lint_paths
from repro_lint.core.catalog import CATALOG
from repro_lint.core.pages import page_text
from repro_lint.core.problems import Problem, internal_error
from repro_lint.core.settings import ConfigError
from repro_lint.engine.cache import cache_folders, remove_caches
from repro_lint.engine.config import load_settings
from repro_lint.engine.discovery import MissingPath, unlintable
from repro_lint.engine.workers import default_jobs
from repro_lint.output import text
from repro_lint.output.context import repository_root
from repro_lint.output.report import FORMATS, errors, render_report, write_report

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(values: tuple[str, ...]) -> list[str]:
    """`--select A,B --select C` -> [A, B, C]; an empty code stays, for the check to refuse."""
    return [code.strip() for value in values for code in value.split(",")]


def _fail(message: str) -> None:
    click.echo(f"repro-lint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


class _Commands(click.Group):
    """The commands, with `probe` imported only when it is asked for: its module loads the probe
    package, which `check`, run on every commit, does not need."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), "probe"])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name == "probe":
            from repro_lint.probe.cli import probe

            return probe
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="repro-lint")
def main() -> None:
    """Find and fix the hidden randomness that makes PyTorch training runs irreproducible."""


def _emit(report: str, output_file: Path | None, summary: str | None) -> None:
    """Print the report, or write it to `output_file` and print only the summary line."""
    if output_file is None:
        click.echo(report, nl=False)
        return
    try:
        write_report(output_file, report)
    except OSError as error:
        _fail(f"cannot write {output_file}: {error.strerror or error}")
    if summary is not None:
        click.echo(summary)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--select", multiple=True, help="Only these codes or prefixes (comma-separated).")
@click.option("--extend-select", multiple=True, help="Add these codes or prefixes to the selection.")
@click.option("--ignore", multiple=True, help="Skip these codes or prefixes.")
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that may slow training or change behaviour.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; change nothing.")
@click.option("--add-noqa", is_flag=True, help="Silence every finding with a `# noqa: CODE` comment on its line.")
@click.option("--output-format", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option(
    "--output-file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the report to FILE (atomically); the terminal gets only the summary.",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--statistics", is_flag=True, help="Count findings by code instead of listing them.")
@click.option("--no-cache", is_flag=True, help="Analyse every file again instead of reusing unchanged files' results.")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=default_jobs,
    show_default="all cores",
    help="Processes that parse files; 1 analyses in this process.",
)
@click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False), help="Configuration file.")
@click.option("--quiet", "-q", is_flag=True, help="Print findings only: no summary, no progress.")
@click.option("--show-traceback", is_flag=True, help="Print the traceback of an internal error.")
def check(
    paths: tuple[Path, ...],
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    add_noqa: bool,
    output_format: str,
    output_file: Path | None,
    exit_zero: bool,
    statistics: bool,
    no_cache: bool,
    jobs: int,
    config_file: Path | None,
    quiet: bool,
    show_traceback: bool,
) -> None:
    """Lint PATHS (default: the current folder)."""
    if add_noqa and (fix or diff):
        _fail("--add-noqa cannot be combined with --fix or --diff")
    # As Ruff does, a path that cannot be linted is an error that does not keep the others from
    # being linted; the run then exits 2.
    reasons = {path: unlintable(path) for path in list(paths) or [Path(".")]}
    unusable = [reason for reason in reasons.values() if reason is not None]
    for reason in unusable:
        click.echo(f"repro-lint: error: {reason}", err=True)
    targets = [path for path, reason in reasons.items() if reason is None]
    if not targets:
        sys.exit(EXIT_ERROR)
    try:
        settings = load_settings(config_file, targets[0]).with_overrides(
            _codes(select) if select else None, _codes(extend_select), _codes(ignore)
        )
        result = lint_paths(
            targets, settings, fix=fix, unsafe_fixes=unsafe_fixes, diff=diff, use_cache=not no_cache, jobs=jobs, progress=not quiet, add_noqa=add_noqa
        )
    except (ConfigError, MissingPath) as error:
        _fail(str(error))
        return
    except Exception as error:  # a bug of the engine itself, outside any one file's or rule's work
        problem = internal_error(".", error)
        click.echo(f"error: repro-lint failed: {problem.summary}", err=True)
        if show_traceback:
            click.echo(problem.traceback.rstrip("\n"), err=True)
        else:
            click.echo("hint: run again with --show-traceback, and please report it with that traceback", err=True)
        sys.exit(EXIT_ERROR)

    if add_noqa and not quiet:
        # On standard error, as Ruff says it: standard output keeps the report's format.
        click.echo(f"Added {result.noqa_added} noqa directive{'' if result.noqa_added == 1 else 's'}.", err=True)
    failed = _say_problems(result.problems, show_traceback) or bool(unusable)
    if diff:
        _emit("".join(result.diffs), output_file, None)
        sys.exit(EXIT_ERROR if failed else EXIT_FINDINGS if result.diffs and not exit_zero else EXIT_OK)

    fixed = result.fixed if fix else None
    report = render_report(
        output_format,
        result.findings,
        fixed=fixed,
        unsafe_fixes=unsafe_fixes,
        statistics=statistics,
        quiet=quiet,
        problems=result.problems,
        root=repository_root(targets[0]),
        docs_url=settings.docs_url,
    )
    _emit(report, output_file, None if quiet else text.summary(result.findings, fixed, unsafe_fixes, errors(result.problems)))
    sys.exit(EXIT_ERROR if failed else EXIT_FINDINGS if result.findings and not exit_zero else EXIT_OK)


def _say_problems(problems: Sequence[Problem], show_traceback: bool) -> bool:
    """Tell on stderr what was not (fully) analysed; whether any of it is an internal error."""
    for problem in problems:
        if problem.kind == "error":
            click.echo(f"error: repro-lint failed on {problem.path}: {problem.summary}", err=True)
            if show_traceback and problem.traceback:
                click.echo(problem.traceback.rstrip("\n"), err=True)
        else:
            click.echo(f"warning: repro-lint skipped {problem.path}: {problem.summary}", err=True)
    failed = errors(problems) > 0
    if failed and not show_traceback:
        click.echo(
            "hint: every other finding was still reported; run again with --show-traceback to see where "
            "repro-lint failed, and please report it with that traceback",
            err=True,
        )
    return failed


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
def clean(paths: tuple[Path, ...]) -> None:
    """Remove the analysis cache of the projects PATHS belong to or contain (default: the current folder)."""
    targets = list(paths) or [Path(".")]
    missing = [str(path) for path in targets if not path.exists()]
    if missing:
        _fail(f"{missing[0]}: no such file or folder")
    folders = cache_folders(targets)
    try:
        remove_caches(folders)
    except OSError as error:
        _fail(f"cannot remove {error.filename}: {error.strerror or error}")
    for folder in folders:
        click.echo(f"removed {folder}")
    if not folders:
        click.echo("no cache to remove")


def _fix_safety(code: str) -> str:
    """"safe", "unsafe" or "safe or unsafe" (a rule with both kinds of fix), as the rule's page heads
    it (`Fix: always (unsafe)`); "" for a rule without a fix."""
    page = page_text(code) or ""
    heading = re.search(r"^Default: .* · Fix: \w+ \((.*)\)$", page, re.MULTILINE)
    said = set(re.findall(r"\b(safe|unsafe)\b", heading.group(1))) if heading else set()
    return " or ".join(sorted(said))


@main.command()
def rules() -> None:
    """List every rule: code, name, default, fix, and whether `--fix` applies it (safe) or only
    `--fix --unsafe-fixes` does (unsafe)."""
    rows = [
        (code, rule.name, "on" if rule.default_enabled else "off", rule.fix_availability.value, _fix_safety(code))
        for code, rule in sorted(CATALOG.items())
    ]
    header = ("code", "name", "default", "fix", "fix safety")
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
    for row in [header, *rows]:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


@main.command()
@click.argument("code")
def explain(code: str) -> None:
    """Print the documentation page of rule CODE."""
    code = code.upper()
    if code not in CATALOG:
        _fail(f"unknown rule code {code!r}; `repro-lint rules` lists them")
    page = page_text(code)
    if page is None:
        _fail(f"no documentation page found for {code}")
    click.echo(page, nl=False)

