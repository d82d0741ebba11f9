"""repro-lint's Python API: lint files and folders, lint or fix one source text.

    from repro_lint.api import lint_paths, lint_source, fix_source
    from repro_lint.core.settings import Settings

    result = lint_paths([Path("train.py")], Settings(), fix=True)
    # An unsaved text instead of the file's (standard input, an editor's buffer); nothing is written:
    result = lint_paths([Path("train.py")], Settings(), fix=True, overrides={Path("train.py"): text})
    fixed = result.fixed_sources.get(Path("train.py").resolve())  # bytes, None where no fix applied

The work is done in `repro_lint.engine` (engine/pipeline.py reads as the stages of a run); this module
is the stable import path the documentation names."""

from repro_lint.core.settings import Settings
from repro_lint.engine.pipeline import LintResult, fix_source, lint_paths, lint_source, lint_text

__all__ = ["LintResult", "Settings", "fix_source", "lint_paths", "lint_source", "lint_text"]
