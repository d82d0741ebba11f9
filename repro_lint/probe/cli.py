"""``repro-lint probe`` commands (click only; the work happens in the other modules).

Importing this module must not import torch: the main CLI registers the group at start-up.
"""

from __future__ import annotations

import functools
import json
import traceback
from typing import Any, Callable

import click

from .checks import PROFILES
from .errors import CannotEvaluate, TorchUnavailable, import_torch
from .report import write_json_atomic
from .runner import SNAPSHOT_POINTS, run_and_snapshot
from .snapshot import error_report, take_snapshot
from .verify import verify as verify_runs

# Everything after the script name belongs to the script, with or without a `--`.
SCRIPT_CONTEXT = {"ignore_unknown_options": True, "allow_interspersed_args": False}

profile_option = click.option(
    "--profile", type=click.Choice(PROFILES), default="strict", show_default=True,
    help="strict: bitwise run to run on one machine; portable: also the same numerics on other "
         "hardware; seeds-only: judge seeding only.")
strict_option = click.option("--strict", is_flag=True, help="Count warnings as failures (exit 1).")


def _emit(result: Any, *, as_json: bool, json_file: str | None, human: bool = True) -> None:
    data = result.to_json()
    if json_file:
        write_json_atomic(json_file, data)
    if as_json:
        click.echo(json.dumps(data, indent=2))
    elif human:
        click.echo(result.render())


def _report(make: Callable[[], Any], *, mode: str, profile: str = "strict", strict: bool = False,
            as_json: bool = False, json_file: str | None = None) -> int:
    """Build, print and (optionally) save a report; return the exit code."""
    try:
        result = make()
    except CannotEvaluate as exc:
        click.echo(f"repro-lint probe: {exc}", err=True)
        torch = None if isinstance(exc, TorchUnavailable) else import_torch()
        result = error_report(mode=mode, profile=profile, strict_warnings=strict, error=str(exc), torch=torch)
        _emit(result, as_json=as_json, json_file=json_file, human=False)  # the line above says it all
        return result.exit_code
    _emit(result, as_json=as_json, json_file=json_file)
    return result.exit_code


def _exits(command: Callable[..., int]) -> Callable[..., None]:
    """Exit with the command's code; an unexpected exception is an internal error (exit 2)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            code = command(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit):
            raise
        except Exception:
            click.echo("repro-lint probe: internal error; please report it with this traceback:", err=True)
            click.echo(traceback.format_exc(), err=True)
            code = 2
        click.get_current_context().exit(code)

    return wrapper


@click.group("probe", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@strict_option
@profile_option
@click.pass_context
def probe(ctx: click.Context, as_json: bool, strict: bool, profile: str) -> None:
    """Runtime probe: judge the determinism settings torch really runs with.

    Without a subcommand it reports this process's environment, like `probe env`.
    Exit codes: 0 pass, 1 a check failed, 2 usage or internal error, 3 cannot evaluate
    (torch missing, or no CUDA for `--selftest cuda`).
    """
    if ctx.invoked_subcommand is not None:
        if as_json or strict or profile != "strict":
            raise click.UsageError("put options after the subcommand, e.g. `repro-lint probe env --json`")
        return
    _exits(_env)(None, as_json, strict, profile)


def _env(selftest: str | None, as_json: bool, strict: bool, profile: str) -> int:
    return _report(lambda: take_snapshot(mode="env", profile=profile, strict_warnings=strict,
                                         selftest=selftest, process_state=False),
                   mode="env", profile=profile, strict=strict, as_json=as_json)


@probe.command("env")
@click.option("--selftest", type=click.Choice(["cpu", "cuda"]),
              help="Also run the empirical kernel self-test on this device (cuda initializes CUDA).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@strict_option
@profile_option
@_exits
def env(selftest: str | None, as_json: bool, strict: bool, profile: str) -> int:
    """Report versions, environment variables and threads, in a fresh process.

    It cannot see settings your code makes at run time; use `probe run` for those.
    """
    return _env(selftest, as_json, strict, profile)


@probe.command("run", context_settings=SCRIPT_CONTEXT)
@click.option("--at", type=click.Choice(SNAPSHOT_POINTS), default="first-step", show_default=True,
              help="Snapshot at the first optimizer step (falls back to the end if none runs) or at the end.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False),
              help="Also write the report as JSON to FILE.")
@strict_option
@profile_option
@click.argument("script", type=click.Path(exists=True, dir_okay=False))
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
@_exits
def run(at: str, json_file: str | None, strict: bool, profile: str, script: str,
        script_args: tuple[str, ...]) -> int:
    """Run SCRIPT in this process and judge the settings it really trains with.

    \b
    Example: repro-lint probe run --json probe.json -- train.py --lr 0.1
    """
    return _report(
        lambda: run_and_snapshot(script, script_args, at=at, profile=profile, strict_warnings=strict),
        mode="wrapper", profile=profile, strict=strict, json_file=json_file)


@probe.command("verify", context_settings=SCRIPT_CONTEXT)
@click.option("--steps", type=click.IntRange(min=1), default=5, show_default=True,
              help="Compare the fingerprints after each of the first N optimizer steps.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False),
              help="Also write the result as JSON to FILE.")
@click.argument("script", type=click.Path(exists=True, dir_okay=False))
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
@_exits
def verify(steps: int, json_file: str | None, script: str, script_args: tuple[str, ...]) -> int:
    """Run SCRIPT twice, in two processes, and compare parameters and loss bitwise after each step.

    Reports the first optimizer step at which the runs diverge, or that they agree.

    \b
    Example: repro-lint probe verify --steps 5 -- train.py --epochs 1
    """
    return _report(lambda: verify_runs(script, script_args, steps), mode="verify", json_file=json_file)
