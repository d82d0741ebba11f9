"""What analysing one file yields, and where the file sits in its project: plain data, so that a run
answered from the cache loads neither LibCST nor the rules."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from repro_lint.analysis.suppression import Suppressions
from repro_lint.core.findings import Finding
from repro_lint.core.problems import Problem
from repro_lint.core.source import Position
from repro_lint.rules.syntax import SyntaxErrorRule

if TYPE_CHECKING:
    from repro_lint.facts.module_facts import ModuleFacts


@dataclass(frozen=True)
class ModuleIdentity:
    """Where a file sits in its project: its dotted module name and its path relative to the root."""

    name: str
    is_package: bool
    relative_path: str

    @classmethod
    def from_relative_path(cls, relative_path: str) -> ModuleIdentity:
        parts = relative_path.removesuffix(".py").split("/")
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        return cls(".".join(parts) or "__init__", is_package, relative_path)


@dataclass
class FileAnalysis:
    display: str
    findings: list[Finding]
    facts: ModuleFacts | None
    suppressions: Suppressions = field(default_factory=Suppressions)
    problem: Problem | None = None  # what kept the analysis from covering the file


def syntax_error(display: str, message: str, line: int, column: int) -> FileAnalysis:
    position = Position(line, column)
    finding = Finding(SyntaxErrorRule.code, SyntaxErrorRule.name, message, display, position, position)
    return FileAnalysis(display, [finding], None)
