"""`repro-lint server`, end to end: a real LSP client (pytest-lsp) talks to the server in a
subprocess over stdio, as an editor would: open, change and save documents, ask for code actions and
hover, change the settings, shut down."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from repro_lint.cli import main  # noqa: E402
from repro_lint.core.settings import ConfigError  # noqa: E402
from repro_lint.lsp.options import Selection, client_selection  # noqa: E402

SPLIT = "import torch\nfrom torch.utils.data import random_split\ntorch.manual_seed(0)\ntrain, val = random_split(ds, [0.9, 0.1])\nloss.backward()\n"
GENERATOR = ", generator=torch.Generator().manual_seed(0)"
FIXED_SPLIT = SPLIT.replace("[0.9, 0.1])", f"[0.9, 0.1]{GENERATOR})")
TWO_SPLITS = SPLIT + "test, rest = random_split(val, [0.5, 0.5])\n"
# Turns cuDNN's benchmark mode on: reported only where a training program of the project reaches it.
HELPER = "import torch\n\ndef speed_up():\n    torch.backends.cudnn.benchmark = True\n"
TRAIN = 'import torch\nfrom helper import speed_up\n\nif __name__ == "__main__":\n    torch.manual_seed(0)\n    speed_up()\n    model(x).sum().backward()\n'
PUBLISH = types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "repro_lint", "server"]))
async def client(lsp_client: LanguageClient):
    yield
    # A test that failed before shutting the server down: pytest-lsp's teardown would wait for it forever.
    if lsp_client._server is not None and lsp_client._server.returncode is None:
        lsp_client._server.kill()


async def start(client: LanguageClient, root: Path, options: object = None) -> types.InitializeResult:
    params = types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=root.as_uri(), initialization_options=options
    )
    return await client.initialize_session(params)


async def finish(client: LanguageClient) -> None:
    await client.shutdown_session()
    assert client._server is not None and client._server.returncode == 0


async def publication(client: LanguageClient, uri: str) -> types.PublishDiagnosticsParams:
    """The next diagnostics published for `uri`, with the version they are of."""
    while True:
        params = await asyncio.wait_for(client.wait_for_notification(PUBLISH), 20)
        if params.uri == uri:
            return params


async def published(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    return list((await publication(client, uri)).diagnostics)


def open_document(client: LanguageClient, path: Path, text: str) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text)))
    return uri


def replace_text(client: LanguageClient, uri: str, version: int, text: str) -> None:
    change = types.TextDocumentContentChangeWholeDocument(text=text)
    client.text_document_did_change(types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(version, uri), [change]))


def change_text(client: LanguageClient, uri: str, version: int, at: types.Position, added: str) -> None:
    change = types.TextDocumentContentChangePartial(range=types.Range(at, at), text=added)
    client.text_document_did_change(types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(version, uri), [change]))


def applied(text: str, edit: types.WorkspaceEdit) -> str:
    """`text` after the edit, as the client applies it (one edit in the document, as the server makes them)."""
    [change] = edit.document_changes
    [text_edit] = change.edits
    lines = text.split("\n")
    start, end = text_edit.range.start, text_edit.range.end
    before = "\n".join(lines[: start.line] + [lines[start.line][: start.character]])
    after = "\n".join([lines[end.line][end.character :]] + lines[end.line + 1 :])
    return before + text_edit.new_text + after


async def actions(
    client: LanguageClient, uri: str, span: types.Range, only: list[str] | None = None, diagnostics: list[types.Diagnostic] = ()
) -> dict[str, types.CodeAction]:
    context = types.CodeActionContext(diagnostics=list(diagnostics), only=only)
    params = types.CodeActionParams(types.TextDocumentIdentifier(uri), span, context)
    return {action.title: action for action in await client.text_document_code_action_async(params) or []}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    return tmp_path


@pytest.mark.asyncio
async def test_open_reports_the_buffer_and_the_fix_action_removes_the_finding(client: LanguageClient, root: Path):
    result = await start(client, root)
    assert result.capabilities.code_action_provider.code_action_kinds == ("quickfix", "source.fixAll.repro-lint")
    (root / "train.py").write_text("x = 1\n", encoding="utf-8")  # the unsaved buffer is linted, not this
    uri = open_document(client, root / "train.py", SPLIT)
    [diagnostic] = await published(client, uri)
    assert (diagnostic.code, diagnostic.source, diagnostic.severity) == ("REP203", "repro-lint", types.DiagnosticSeverity.Warning)
    assert diagnostic.range == types.Range(types.Position(3, 13), types.Position(3, 41))
    assert diagnostic.code_description is None  # no docs-url configured: hover shows the page instead

    offered = await actions(client, uri, diagnostic.range)
    assert sorted(offered) == ["Add `# noqa: REP203`", f"Fix REP203: Add `{GENERATOR[2:]}` (safe)", "Fix all safe repro-lint findings in this file"]
    fix = offered[f"Fix REP203: Add `{GENERATOR[2:]}` (safe)"]
    assert (fix.kind, fix.is_preferred, fix.diagnostics[0].code) == ("quickfix", True, "REP203")
    fixed = applied(SPLIT, fix.edit)
    assert fixed == FIXED_SPLIT
    replace_text(client, uri, 2, fixed)
    assert await published(client, uri) == []
    assert (root / "train.py").read_text(encoding="utf-8") == "x = 1\n"  # nothing written
    await finish(client)


@pytest.mark.asyncio
async def test_noqa_action_silences_the_finding(client: LanguageClient, root: Path):
    await start(client, root)
    uri = open_document(client, root / "train.py", SPLIT)
    [diagnostic] = await published(client, uri)
    # The cursor at the start of the line, the line's diagnostics in the context, as Neovim asks.
    cursor = types.Range(types.Position(3, 0), types.Position(3, 0))
    assert await actions(client, uri, cursor, only=["quickfix"]) == {}  # nothing under the cursor
    silence = (await actions(client, uri, cursor, only=["quickfix"], diagnostics=[diagnostic]))["Add `# noqa: REP203`"]
    silenced = applied(SPLIT, silence.edit)
    assert silenced.splitlines()[3] == "train, val = random_split(ds, [0.9, 0.1])  # noqa: REP203"
    replace_text(client, uri, 2, silenced)
    assert await published(client, uri) == []
    await finish(client)


@pytest.mark.asyncio
async def test_fix_all_applies_every_safe_fix_of_the_file(client: LanguageClient, root: Path):
    await start(client, root)
    uri = open_document(client, root / "train.py", TWO_SPLITS)
    assert [d.code for d in await published(client, uri)] == ["REP203", "REP203"]
    everywhere = types.Range(types.Position(0, 0), types.Position(0, 0))
    [fix_all] = (await actions(client, uri, everywhere, only=["source.fixAll"])).values()
    assert (fix_all.title, fix_all.kind) == ("Fix all safe repro-lint findings in this file", "source.fixAll.repro-lint")
    fixed = applied(TWO_SPLITS, fix_all.edit)
    assert fixed.count(GENERATOR) == 2
    replace_text(client, uri, 2, fixed)
    assert await published(client, uri) == []
    assert await actions(client, uri, everywhere, only=["source.fixAll"]) == {}  # nothing left to fix
    await finish(client)


@pytest.mark.asyncio
async def test_changes_are_linted_once_typing_pauses(client: LanguageClient, root: Path):
    await start(client, root)
    uri = open_document(client, root / "train.py", "import torch\nfrom torch.utils.data import random_split\n")
    assert await published(client, uri) == []
    # Incremental changes in quick succession: the first diagnostics published are of the last text.
    # A character outside the BMP counts two UTF-16 units, as the client counts columns.
    changes = [(2, "torch.manual_seed(0)\n"), (3, 'a = "😀"; '), (3, "loss.backward()\n")]
    for version, (line, added) in enumerate(changes, start=2):
        change_text(client, uri, version, types.Position(line, 0), added)
    after = await publication(client, uri)
    assert (after.version, after.diagnostics) == (4, ())
    change_text(client, uri, 5, types.Position(4, 10), "train, val = random_split(ds, [0.9, 0.1])\n")
    [diagnostic] = await published(client, uri)
    assert (diagnostic.code, diagnostic.range.start) == ("REP203", types.Position(4, 10 + 13))
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(4, 30)))
    assert hover is not None and hover.contents.value.startswith("**REP203** (random-split-missing-generator): ")
    assert "\n# REP203" in hover.contents.value  # the rule's page
    await finish(client)


@pytest.mark.asyncio
async def test_project_files_count_and_unsaved_buffers_override_them(client: LanguageClient, root: Path):
    (root / "train.py").write_text(TRAIN, encoding="utf-8")
    (root / "helper.py").write_text("def speed_up():\n    pass\n", encoding="utf-8")
    await start(client, root)
    helper = open_document(client, root / "helper.py", HELPER)
    [diagnostic] = await published(client, helper)  # the training script on disk reaches it
    assert (diagnostic.code, diagnostic.range.start) == ("REP301", types.Position(3, 4))
    [fix] = [action for title, action in (await actions(client, helper, diagnostic.range)).items() if title.startswith("Fix REP301")]
    assert fix.title.endswith(" (unsafe)") and not fix.is_preferred
    assert applied(HELPER, fix.edit).endswith("torch.backends.cudnn.benchmark = False\n")
    # The training script's unsaved buffer no longer trains; saving it re-lints every open document.
    train = open_document(client, root / "train.py", TRAIN.replace("model(x).sum().backward()", "print(model(x))"))
    assert await published(client, train) == []
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(train)))
    assert await published(client, helper) == []
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(train)))
    assert await published(client, train) == []
    await finish(client)


@pytest.mark.asyncio
async def test_settings_come_from_the_project_then_the_client(client: LanguageClient, root: Path):
    (root / "pyproject.toml").write_text('[tool.repro-lint]\ndocs-url = "https://example.org/rules/"\n', encoding="utf-8")
    await start(client, root, {"ignore": ["REP203"]})
    uri = open_document(client, root / "train.py", SPLIT)
    assert await published(client, uri) == []
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"repro-lint": {"select": ["REP2"]}}))
    [diagnostic] = await published(client, uri)
    assert diagnostic.code == "REP203"
    assert diagnostic.code_description.href == "https://example.org/rules/REP203.md"
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"repro_lint": {"ignore": ["REP2"]}}))
    assert await published(client, uri) == []
    # A code that does not exist: said, and the selection stays as it was.
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"ignore": ["REP999"]}))
    said = await asyncio.wait_for(client.wait_for_notification(types.WINDOW_SHOW_MESSAGE), 20)
    assert said.message == "repro-lint: unknown rule code or prefix 'REP999' in the editor's settings: `ignore`; `repro-lint rules` lists them"
    # A broken project configuration: said, and no findings shown rather than stale ones.
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"select": ["REP2"]}))
    assert [diagnostic.code for diagnostic in await published(client, uri)] == ["REP203"]
    (root / "pyproject.toml").write_text('[tool.repro-lint]\nselect = "REP2"\n', encoding="utf-8")
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    assert await published(client, uri) == []
    assert client.messages[-1].message.endswith("[tool.repro-lint]: `select` must be a list of strings")
    await finish(client)


def test_client_selection_reads_every_spelling():
    assert client_selection(None) is None
    assert client_selection({"other": {"select": ["REP1"]}}) is None
    assert client_selection({"select": ["REP1"]}) == Selection(("REP1",), ())
    assert client_selection({"repro-lint": {"ignore": ["REP203"]}}) == Selection(None, ("REP203",))
    assert client_selection({"repro_lint": {}}) == Selection()
    with pytest.raises(ConfigError, match="the editor's settings: `ignore` must be a list of rule codes"):
        client_selection({"ignore": "REP203"})


def test_server_without_pygls_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygls", None)  # `import pygls` raises ModuleNotFoundError
    for name in [name for name in sys.modules if name.startswith("repro_lint.lsp.") or name.startswith("pygls.")]:
        monkeypatch.delitem(sys.modules, name)
    result = CliRunner().invoke(main, ["server"])
    assert result.exit_code == 2
    assert result.stderr == "repro-lint: error: repro-lint server needs the lsp extra (pygls): run pip install '.[lsp]' in your copy of repro-lint, into the environment repro-lint runs in\n"


def test_the_rest_of_the_command_line_never_imports_pygls():
    code = "import sys, repro_lint.cli; print(sorted(n for n in sys.modules if n.startswith(('pygls', 'lsprotocol'))))"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (completed.returncode, completed.stdout) == (0, "[]\n")
