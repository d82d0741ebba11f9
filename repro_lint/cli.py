"""The `repro-lint` command line: click commands only, the work happens in api.py."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Collection, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NoReturn, TextIO, TypeVar

import click

from repro_lint.api import lint_paths
from repro_lint.core.catalog import CATALOG
from repro_lint.core.pages import page_text
from repro_lint.core.problems import Problem, internal_error
from repro_lint.core.settings import ConfigError, Settings
from repro_lint.engine.cache import cache_folders, remove_caches
from repro_lint.engine.config import find_config_file, load_settings
from repro_lint.engine.discovery import MissingPath, unlintable
from repro_lint.engine.workers import default_jobs
from repro_lint.lsp import MissingExtra, serve
from repro_lint.output import text
from repro_lint.output.audit import AUDIT_FORMATS
from repro_lint.output.context import repository_root
from repro_lint.output.report import FORMATS, errors, render_report, write_report
from repro_lint.output.sarif import tool_version

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
_T = TypeVar("_T")


def _codes(values: tuple[str, ...]) -> list[str]:
    """`--select A,B --select C` -> [A, B, C]; an empty code stays, for the check to refuse."""
    return [code.strip() for value in values for code in value.split(",")]


def _per_file_ignores(values: tuple[str, ...]) -> list[tuple[str, tuple[str, ...]]]:
    """`--per-file-ignores 'tests/*:REP1,REP2,scripts/*:REP3'` (Ruff's comma-separated PATTERN:CODE
    pairs, where a code alone continues the pattern before it) -> [("tests/*", ("REP1", "REP2")),
    ("scripts/*", ("REP3",))]; a pattern given twice gets both lists of codes."""
    table: dict[str, list[str]] = {}
    pattern = ""
    for item in _codes(values):
        head, colon, code = item.rpartition(":")
        if colon:
            pattern = head
        if not pattern:
            raise ConfigError(f"--per-file-ignores takes PATTERN:CODES, such as 'tests/*:REP1,REP2', not {item!r}")
        table.setdefault(pattern, []).append(code)
    return [(pattern, tuple(codes)) for pattern, codes in table.items()]


def _colored(choice: str, stream: TextIO) -> bool:
    """`--color`: auto colours a terminal's report unless NO_COLOR is set to anything (no-color.org);
    the option given says more than the variable."""
    if choice != "auto":
        return choice == "always"
    return not os.environ.get("NO_COLOR") and stream.isatty()


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


def run() -> NoReturn:
    """The `repro-lint` console command: `main`, then an exit that leaves the heap as it is. A run on
    a large project ends holding every module's facts (about 300 MB on transformers), and Python
    frees them object by object when it exits: a second of a six-second pre-commit run there, which
    the operating system does at once. mypy ends its runs the same way (`mypy.util.hard_exit`).
    Nothing is left to do by then: reports are printed or written, fixed files are replaced
    atomically, and the worker pools are shut down."""
    try:
        main()
    except SystemExit as stop:
        status = _status(stop.code)
    else:
        status = EXIT_OK
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`repro-lint check | head`): nothing more to say
            pass
    os._exit(status)


def _status(code: object) -> int:
    """The exit status Python gives `sys.exit(code)`, printing a message given instead of a number."""
    if code is None:
        return EXIT_OK
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _emit(report: str, output_file: Path | None, summary: str | None, err: bool = False, color: bool = False) -> None:
    """Print the report (on stderr with `err`; `color`: it is coloured, keep its colours even in a
    pipe), or write it to `output_file` and print only the summary line."""
    if output_file is None:
        click.echo(report, nl=False, err=err, color=color or None)
        return
    try:
        write_report(output_file, report)
    except OSError as error:
        _fail(f"cannot write {output_file}: {error.strerror or error}")
    if summary is not None:
        click.echo(summary, err=err)


def _stdin_source(paths: tuple[Path, ...], stdin_filename: Path | None, add_noqa: bool) -> dict[Path, bytes]:
    """Standard input as the file `--stdin-filename` names (its name decides the project, the kind of
    file and the per-file settings), when `-` or that option asks for it; else nothing."""
    if stdin_filename is None:
        if Path("-") in paths:
            _fail("reading standard input (`-`) needs --stdin-filename PATH: the file it is to be linted as")
        return {}
    if any(path != Path("-") for path in paths):
        _fail("--stdin-filename lints standard input: give no path, or `-`")
    if add_noqa:
        _fail("--add-noqa writes files: it cannot read standard input")
    return {stdin_filename: sys.stdin.buffer.read()}


# The options `check` and `audit` share: which files and rules, which settings, and how the run goes.
_SELECTION = (
    click.option("--select", multiple=True, help="Only these codes or prefixes (comma-separated)."),
    click.option("--extend-select", multiple=True, help="Add these codes or prefixes to the selection."),
    click.option("--ignore", multiple=True, help="Skip these codes or prefixes."),
)
_RUN = (
    click.option(
        "--output-file",
        type=click.Path(path_type=Path, dir_okay=False),
        help="Write the report to FILE (atomically); the terminal gets only the summary.",
    ),
    click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain."),
    click.option("--no-cache", is_flag=True, help="Analyse every file again instead of reusing unchanged files' results."),
    click.option(
        "--jobs",
        "-j",
        type=click.IntRange(min=1),
        default=default_jobs,
        show_default="all cores",
        help="Processes that parse files; 1 analyses in this process.",
    ),
    click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False), help="Configuration file."),
    click.option("--quiet", "-q", is_flag=True, help="Print the report only: no summary, no progress."),
    click.option("--show-traceback", is_flag=True, help="Print the traceback of an internal error."),
)


def _options(*options: Callable[[Callable[..., None]], Callable[..., None]]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def _targets(paths: tuple[Path, ...], given: Collection[Path] = ()) -> tuple[list[Path], bool]:
    """The paths that can be linted (default: the current folder), and whether some could not. As
    Ruff does, a path that cannot be linted is an error that does not keep the others from being
    linted; the run then exits 2. A path whose text is `given` (standard input) need not exist."""
    reasons = {path: None if path in given else unlintable(path) for path in list(paths) or [Path(".")]}
    unusable = [reason for reason in reasons.values() if reason is not None]
    for reason in unusable:
        click.echo(f"repro-lint: error: {reason}", err=True)
    targets = [path for path, reason in reasons.items() if reason is None]
    if not targets:
        sys.exit(EXIT_ERROR)
    return targets, bool(unusable)


def _settings(
    config_file: Path | None, target: Path, select: tuple[str, ...], extend_select: tuple[str, ...], ignore: tuple[str, ...], **files: Any
) -> Settings:
    """The settings of the project holding `target`, with the command line's selection (and, for
    `check`, its file options: `exclude`, `extend_exclude`, `per_file_ignores`) over them."""
    return load_settings(config_file, target).with_overrides(_codes(select) if select else None, _codes(extend_select), _codes(ignore), **files)


def _guarded(work: Callable[[], _T], show_traceback: bool) -> _T:
    """`work()`, with a bad setting or path said in one line and an internal error of the engine
    itself (outside any one file's or rule's work) as `check` says it; both exit 2."""
    try:
        return work()
    except (ConfigError, MissingPath) as error:
        _fail(str(error))
    except Exception as error:
        problem = internal_error(".", error)
        click.echo(f"error: repro-lint failed: {problem.summary}", err=True)
        if show_traceback:
            click.echo(problem.traceback.rstrip("\n"), err=True)
        else:
            click.echo("hint: run again with --show-traceback, and please report it with that traceback", err=True)
    sys.exit(EXIT_ERROR)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@_options(*_SELECTION)
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that may slow training or change behaviour.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; change nothing.")
@click.option("--add-noqa", is_flag=True, help="Silence every finding with a `# noqa: CODE` comment on its line.")
@click.option(
    "--output-format",
    type=click.Choice(FORMATS),
    default="concise",
    show_default=True,
    help="concise (alias: text): a line per finding; full: also its source and fix; the others are for machines.",
)
@click.option("--statistics", is_flag=True, help="Count findings by code instead of listing them (JSON with --output-format json).")
@click.option("--show-fixes", is_flag=True, help="Mark findings --fix would fix with [*]; with --fix, list the fixes made.")
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour the report for people; auto: on a terminal, unless NO_COLOR is set.",
)
@click.option("--exclude", multiple=True, help="Skip files and folders matching these patterns, instead of the configured and default ones (comma-separated).")
@click.option("--extend-exclude", multiple=True, help="Also skip files and folders matching these patterns (comma-separated).")
@click.option(
    "--per-file-ignores",
    multiple=True,
    metavar="PATTERN:CODES",
    help="Skip codes in files matching a pattern, instead of the configured per-file-ignores (`tests/*:REP1,REP2,scripts/*:REP3`).",
)
@click.option(
    "--stdin-filename",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Lint standard input as this file of its project; with --fix, print the fixed text and change no file.",
)
@_options(*_RUN)
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
    show_fixes: bool,
    color: str,
    exclude: tuple[str, ...],
    extend_exclude: tuple[str, ...],
    per_file_ignores: tuple[str, ...],
    no_cache: bool,
    jobs: int,
    config_file: Path | None,
    quiet: bool,
    show_traceback: bool,
    stdin_filename: Path | None,
) -> None:
    """Lint PATHS (default: the current folder; `-` with --stdin-filename: standard input)."""
    if add_noqa and (fix or diff):
        _fail("--add-noqa cannot be combined with --fix or --diff")
    stdin = _stdin_source(paths, stdin_filename, add_noqa)
    if stdin:
        paths = tuple(stdin)
    targets, unusable = _targets(paths, given=stdin)
    settings = _guarded(
        lambda: _settings(
            config_file,
            targets[0],
            select,
            extend_select,
            ignore,
            exclude=_codes(exclude) if exclude else None,
            extend_exclude=_codes(extend_exclude),
            per_file_ignores=_per_file_ignores(per_file_ignores) if per_file_ignores else None,
        ),
        show_traceback,
    )
    result = _guarded(
        lambda: lint_paths(
            targets,
            settings,
            fix=fix,
            unsafe_fixes=unsafe_fixes,
            diff=diff,
            use_cache=not no_cache,
            jobs=jobs,
            progress=not quiet,
            add_noqa=add_noqa,
            overrides=stdin,
        ),
        show_traceback,
    )

    if add_noqa and not quiet:
        # On standard error, as Ruff says it: standard output keeps the report's format.
        click.echo(f"Added {result.noqa_added} noqa directive{'' if result.noqa_added == 1 else 's'}.", err=True)
    failed = _say_problems(result.problems, show_traceback) or unusable
    if diff:
        _emit("".join(result.diffs), output_file, None)
        sys.exit(EXIT_ERROR if failed else EXIT_FINDINGS if result.diffs and not exit_zero else EXIT_OK)

    fixed = result.fixed if fix else None
    if fix and stdin:
        # As Ruff does: the fixed text (the text as given where no fix applied) is the output, and
        # the report goes to stderr.
        sys.stdout.buffer.write(result.fixed_sources.get(paths[0].resolve(), stdin[paths[0]]))
        sys.stdout.buffer.flush()
    to_stderr = fix and bool(stdin)
    colored = output_file is None and _colored(color, sys.stderr if to_stderr else sys.stdout)
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
        texts=result.texts,
        color=colored,
        show_fixes=show_fixes,
        fixed_by_file=result.fixed_by_file,
    )
    summary = None if quiet else text.summary(result.findings, fixed, unsafe_fixes, errors(result.problems))
    _emit(report, output_file, summary, err=to_stderr, color=colored)
    sys.exit(EXIT_ERROR if failed else EXIT_FINDINGS if result.findings and not exit_zero else EXIT_OK)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@_options(*_SELECTION)
@click.option("--output-format", type=click.Choice(AUDIT_FORMATS), default="text", show_default=True)
@click.option(
    "--probe-report",
    "probe_files",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="A `repro-lint probe --json` report, shown beside the program it ran (or every program); repeatable.",
)
@_options(*_RUN)
def audit(
    paths: tuple[Path, ...],
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    output_format: str,
    probe_files: tuple[Path, ...],
    output_file: Path | None,
    exit_zero: bool,
    no_cache: bool,
    jobs: int,
    config_file: Path | None,
    quiet: bool,
    show_traceback: bool,
) -> None:
    """Judge each program in PATHS (default: the current folder) in five areas: seeding,
    determinism, data order, checkpoints, configs. Exits 1 when a program is not reproducible."""
    # The audit's own modules load for audits only.
    from repro_lint.engine.audit import audit_paths
    from repro_lint.engine.probe_reports import ProbeReportError, read_probe_report
    from repro_lint.engine.scorecard import judge
    from repro_lint.output.audit.context import AuditContext
    from repro_lint.output.audit.report import render_audit
    from repro_lint.output.audit.totals import totals_line

    try:
        probes = [read_probe_report(path) for path in probe_files]
    except ProbeReportError as error:
        _fail(str(error))
    targets, unusable = _targets(paths)
    settings = _guarded(lambda: _settings(config_file, targets[0], select, extend_select, ignore), show_traceback)
    run = _guarded(lambda: audit_paths(targets, settings, use_cache=not no_cache, jobs=jobs, progress=not quiet, probes=probes), show_traceback)
    failed = _say_problems(run.problems, show_traceback) or unusable
    for report in run.unmatched_probes:
        click.echo(f"warning: probe report {report.file} ran {report.script}, which is none of the programs audited", err=True)
    scorecard = judge(run, settings.enabled_codes)
    config = config_file or find_config_file(targets[0])
    context = AuditContext(
        tuple(str(path) for path in targets),
        None if config is None else str(config),
        settings.docs_url,
        tool_version(),
        datetime.now(timezone.utc).astimezone(),
        color=output_file is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ,
    )
    report = render_audit(output_format, scorecard, context)
    _emit(report, output_file, None if quiet else totals_line(scorecard))
    reproducible = scorecard.reproducible == len(scorecard.programs)
    sys.exit(EXIT_ERROR if failed else EXIT_FINDINGS if not reproducible and not exit_zero else EXIT_OK)


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
def server() -> None:
    """Run the language server on standard input and output, for editors: findings as diagnostics
    as you type, and code actions that fix them or add `# noqa`. Needs the lsp extra (pygls)."""
    try:
        serve()
    except MissingExtra as error:
        _fail(str(error))


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

