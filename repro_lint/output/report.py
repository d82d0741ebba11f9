"""The report of one `repro-lint check`, in the chosen format, and where it goes: standard output or
a file written atomically (a CI step reading it never sees half a report)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from repro_lint.core.findings import Finding
from repro_lint.core.problems import Problem
from repro_lint.engine.fixes import applicable
from repro_lint.engine.modules import ReportedTexts
from repro_lint.output import full, github, gitlab, json_lines, json_output, junit, pylint, sarif, text
from repro_lint.output.context import ReportContext

# For people: the findings, then the summary. `text` is `concise` by its older name (Ruff's too).
HUMAN_FORMATS = {"concise": text.render, "full": full.render, "text": text.render}
# For machines: the findings only.
MACHINE_FORMATS = {
    "json": json_output.render,
    "json-lines": json_lines.render,
    "junit": junit.render,
    "gitlab": gitlab.render,
    "pylint": pylint.render,
    "sarif": sarif.render,
    "github": github.render,
}
FORMATS = (*HUMAN_FORMATS, *MACHINE_FORMATS)


def render_report(
    output_format: str,
    findings: Sequence[Finding],
    *,
    fixed: int | None = None,
    unsafe_fixes: bool = False,
    statistics: bool = False,
    quiet: bool = False,
    problems: Sequence[Problem] = (),
    root: Path,
    docs_url: str | None,
    texts: ReportedTexts | None = None,
    color: bool = False,
    show_fixes: bool = False,
    fixed_by_file: Mapping[str, Mapping[str, int]] | None = None,
) -> str:
    """The whole report as text, each line ending in a newline (empty when there is nothing to say).
    Machine formats are the findings only, the summary is for people; `--statistics` has a JSON
    shape too (Ruff's). They name files from `root` (SARIF, GitHub, GitLab) and link rule pages under
    `docs_url` (JSON, SARIF). Formats for people may be coloured, show the source lines (`texts`)
    and, with `show_fixes`, mark what `--fix` would fix or list what it fixed (`fixed_by_file`)."""
    context = ReportContext(root, docs_url, problems, texts)
    if statistics and output_format == "json":
        return json_output.statistics(findings, unsafe_fixes) + "\n"
    if output_format in MACHINE_FORMATS:
        rendered = MACHINE_FORMATS[output_format](findings, context)
        return rendered + "\n" if rendered else ""
    if output_format not in HUMAN_FORMATS:
        raise ValueError(f"unknown output format {output_format!r}")
    if statistics:
        lines = text.statistics(findings)
    else:
        marked = (lambda finding: applicable(finding, unsafe_fixes)) if show_fixes else (lambda finding: False)
        lines = HUMAN_FORMATS[output_format](findings, context, color, marked)
        if show_fixes and fixed_by_file:
            lines.extend(text.fixes_applied(fixed_by_file, color))
        if not quiet:
            lines.append(text.summary(findings, fixed, unsafe_fixes, errors(problems)))
    return "".join(line + "\n" for line in lines)


def errors(problems: Sequence[Problem]) -> int:
    return sum(problem.kind == "error" for problem in problems)


def _umask() -> int:
    # The only portable way to read the umask is to set it; put it straight back.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_report(path: Path, content: str) -> None:
    """Write through a temporary file in the same folder renamed over `path`. An existing file keeps
    its permissions; a new one gets the usual ones (mkstemp's would be owner-only)."""
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask()
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(content)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
