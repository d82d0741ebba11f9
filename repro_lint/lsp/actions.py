"""The code actions on a document's findings: apply one finding's fix (its title says whether the fix
is safe or unsafe), silence it with `# noqa: CODE`, and fix every safe finding in the file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types

from repro_lint.core.findings import Applicability, Finding
from repro_lint.lsp.convert import Positions, diagnostic, text_edit
from repro_lint.lsp.linting import Linted, silenceable, with_fix, with_noqa

FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.repro-lint"
KINDS = (types.CodeActionKind.QuickFix.value, FIX_ALL)


def wanted(kind: str, only: Sequence[str] | None) -> bool:
    """Whether the client asked for actions of `kind`: `only` lists kinds and their parents
    (`source` takes `source.fixAll.repro-lint`)."""
    return only is None or any(kind == asked or kind.startswith(f"{asked}.") for asked in only)


@dataclass(frozen=True)
class Target:
    """The open document the actions edit, at the version its findings were found in."""

    uri: str
    version: int | None
    positions: Positions
    # Whether the client takes `documentChanges`: versioned edits it refuses once the text has moved on.
    versioned: bool

    def edit(self, before: str, after: str) -> types.WorkspaceEdit:
        change = text_edit(before, after, self.positions)
        if self.versioned:
            document = types.OptionalVersionedTextDocumentIdentifier(uri=self.uri, version=self.version)
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=document, edits=[change])])
        return types.WorkspaceEdit(changes={self.uri: [change]})


def quick_fixes(path: Path, linted: Linted, finding: Finding, target: Target) -> list[types.CodeAction]:
    """Fix the finding, where its fix applies; silence it, where a `noqa` comment can."""
    actions = []
    shown = [diagnostic(finding, target.positions, linted.settings.docs_url)]
    fixed = with_fix(path, linted, finding)
    if finding.fix is not None and fixed is not None:
        safe = finding.fix.applicability is Applicability.SAFE
        actions.append(
            types.CodeAction(
                title=f"Fix {finding.code}: {finding.fix.message} ({finding.fix.applicability.value})",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=shown,
                edit=target.edit(linted.text, fixed),
                is_preferred=safe or None,
            )
        )
    silenced = with_noqa(linted, finding) if silenceable(finding) else None
    if silenced is not None:
        actions.append(
            types.CodeAction(
                title=f"Add `# noqa: {finding.code}`",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=shown,
                edit=target.edit(linted.text, silenced),
            )
        )
    return actions


def fix_all(linted: Linted, fixed: str, target: Target) -> types.CodeAction:
    return types.CodeAction(
        title="Fix all safe repro-lint findings in this file",
        kind=FIX_ALL,
        edit=target.edit(linted.text, fixed),
    )


def has_safe_fix(linted: Linted) -> bool:
    return any(finding.fix is not None and finding.fix.applicability is Applicability.SAFE for finding in linted.findings)
