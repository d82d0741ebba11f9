"""The server's wiring to pygls: which document events lint which documents and when, and the
requests (code actions, hover) answered from the last lint of a document."""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from repro_lint.core.findings import Finding
from repro_lint.core.settings import ConfigError
from repro_lint.lsp.actions import KINDS, FIX_ALL, Target, fix_all, has_safe_fix, quick_fixes, wanted
from repro_lint.lsp.convert import SOURCE, Positions, diagnostic, hover_text
from repro_lint.lsp.linting import Linted, lint_document, with_every_safe_fix
from repro_lint.lsp.options import Selection, client_selection, document_settings
from repro_lint.output.sarif import tool_version

# Typing pauses this long before a changed document is linted; a newer change starts the wait again.
DEBOUNCE_S = 0.3
_T = TypeVar("_T")


class ReproLintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(SOURCE, tool_version() or "unknown", text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.selection = Selection()
        self.linted: dict[str, Linted] = {}
        # As the client spells them: the workspace keys its documents by unquoted URIs, but diagnostics
        # must name a document as the client does.
        self.open_uris: set[str] = set()
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._said: set[str] = set()
        # Lints run one at a time (they share the project's cache) in a thread, so that the event loop
        # keeps answering requests meanwhile.
        self._linter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="repro-lint")

    def python_document(self, uri: str) -> TextDocument | None:
        """The open document, if it is a Python file on disk (an untitled buffer has no project)."""
        document = self.workspace.text_documents.get(unquote(uri))
        if document is None or not uri.startswith("file:") or document.path is None or not document.path.endswith(".py"):
            return None
        return document

    def open_texts(self, besides: str) -> dict[Path, str]:
        """The unsaved texts of the other open Python documents, which count instead of their files."""
        documents = (self.python_document(uri) for uri in self.open_uris if uri != besides)
        return {Path(document.path): document.source for document in documents if document is not None}

    async def in_thread(self, work: Callable[..., _T], *args: object) -> _T:
        return await asyncio.get_running_loop().run_in_executor(self._linter, work, *args)

    def say(self, kind: types.MessageType, message: str) -> None:
        """Show a message once per session: a broken configuration would otherwise be said on every keystroke."""
        if message not in self._said:
            self._said.add(message)
            self.window_show_message(types.ShowMessageParams(type=kind, message=f"repro-lint: {message}"))

    def log(self, kind: types.MessageType, message: str) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def schedule(self, uri: str, delay: float) -> None:
        """Lint the document after `delay`, instead of any lint of it still waiting."""
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self._pending[uri] = asyncio.get_running_loop().create_task(self._lint(uri, delay))

    def schedule_all(self, delay: float) -> None:
        for uri in self.open_uris:
            self.schedule(uri, delay)

    def forget(self, uri: str) -> None:
        self.open_uris.discard(uri)
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.linted.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    async def _lint(self, uri: str, delay: float) -> None:
        await asyncio.sleep(delay)
        document = self.python_document(uri)
        if document is None:
            return
        text, version, path = document.source, document.version, Path(document.path)
        try:
            settings = document_settings(path, self.selection)
            linted = await self.in_thread(lint_document, path, text, settings, self.open_texts(uri))
        except ConfigError as error:
            # No findings are known under a broken configuration: those shown would be stale.
            self.say(types.MessageType.Error, str(error))
            self.linted.pop(uri, None)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
            return
        except Exception:
            self.log(types.MessageType.Error, f"repro-lint failed on {path}:\n{traceback.format_exc()}")
            return
        current = self.python_document(uri)
        if current is None or current.source != text:  # edited meanwhile: its own lint is on the way
            return
        self.linted[uri] = linted
        for problem in linted.problems:
            self.log(types.MessageType.Warning, f"repro-lint skipped {problem.path}: {problem.summary}")
        positions = Positions(text, current.position_codec)
        diagnostics = [diagnostic(finding, positions, settings.docs_url) for finding in linted.findings]
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    def current(self, uri: str) -> tuple[TextDocument, Linted] | None:
        """The document and its last lint, if the lint is of its present text."""
        document, linted = self.python_document(uri), self.linted.get(uri)
        if document is None or linted is None or document.source != linted.text:
            return None
        return document, linted

    def takes_versioned_edits(self) -> bool:
        workspace = self.client_capabilities.workspace
        edits = workspace.workspace_edit if workspace is not None else None
        return bool(edits is not None and edits.document_changes)


def _overlaps(finding: Finding, positions: Positions, span: types.Range) -> bool:
    start, end = positions.from_client(span.start), positions.from_client(span.end)
    return finding.start <= end and start <= finding.end


def _asked_about(finding: Finding, positions: Positions, params: types.CodeActionParams) -> bool:
    """Whether the finding is in the requested range, or among the diagnostics the client names (the
    cursor's line's, which Neovim sends with the cursor alone as the range)."""
    if _overlaps(finding, positions, params.range):
        return True
    span = positions.range(finding.start, finding.end)
    return any(shown.code == finding.code and shown.range == span for shown in params.context.diagnostics)


def build_server() -> ReproLintServer:
    server = ReproLintServer()

    def set_selection(options: object) -> bool:
        try:
            selection = client_selection(options)
        except ConfigError as error:
            server.say(types.MessageType.Error, str(error))
            return False
        if selection is None:
            return False
        server.selection = selection
        return True

    @server.feature(types.INITIALIZE)
    def initialize(ls: ReproLintServer, params: types.InitializeParams) -> None:
        set_selection(params.initialization_options)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: ReproLintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.open_uris.add(params.text_document.uri)
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: ReproLintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE_S)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: ReproLintServer, params: types.DidSaveTextDocumentParams) -> None:
        # A saved file is part of every open document's project from now on.
        ls.schedule_all(0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: ReproLintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: ReproLintServer, params: types.DidChangeConfigurationParams) -> None:
        if set_selection(params.settings):
            ls.schedule_all(0)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=list(KINDS)))
    async def code_action(ls: ReproLintServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        found = ls.current(uri)
        if found is None:
            return None
        document, linted = found
        path = Path(document.path)
        target = Target(uri, document.version, Positions(linted.text, document.position_codec), ls.takes_versioned_edits())
        only = params.context.only
        actions = []
        if wanted(types.CodeActionKind.QuickFix.value, only):
            for finding in linted.findings:
                if _asked_about(finding, target.positions, params):
                    actions += quick_fixes(path, linted, finding, target)
        if wanted(FIX_ALL, only) and has_safe_fix(linted):
            fixed = await ls.in_thread(with_every_safe_fix, path, linted, ls.open_texts(uri))
            if fixed is not None and ls.linted.get(uri) is linted and document.source == linted.text:
                actions.append(fix_all(linted, fixed, target))
        return actions or None

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: ReproLintServer, params: types.HoverParams) -> types.Hover | None:
        found = ls.current(params.text_document.uri)
        if found is None:
            return None
        document, linted = found
        positions = Positions(linted.text, document.position_codec)
        at = types.Range(params.position, params.position)
        shown = [finding for finding in linted.findings if _overlaps(finding, positions, at)]
        if not shown:
            return None
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(hover_text(finding) for finding in shown)),
            range=positions.range(shown[0].start, shown[0].end),
        )

    return server
