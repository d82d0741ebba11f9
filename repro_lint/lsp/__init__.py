"""The language server, `repro-lint server`: a front-end beside the command line, for editors.

`options` reads the client's rule selection over the project's settings, `linting` lints, fixes and
silences one open document (no LSP types), `convert` turns findings and texts into LSP positions,
diagnostics and edits, `actions` builds the code actions, and `server` wires it all to pygls.

May import `repro_lint.api` and every layer below the front-ends. pygls and lsprotocol come with the
`lsp` extra, and only `convert`, `actions` and `server` import them: loaded when the server runs, never
by the rest of the command line."""

from __future__ import annotations

MISSING_EXTRA = (
    "repro-lint server needs the lsp extra (pygls): run pip install '.[lsp]' in your copy of repro-lint, "
    "into the environment repro-lint runs in"
)
_EXTRA_MODULES = ("pygls", "lsprotocol")


class MissingExtra(Exception):
    """pygls (or its lsprotocol) is not installed."""


def serve() -> None:
    """Serve one client over standard input and output until it exits."""
    try:
        from repro_lint.lsp.server import build_server
    except ModuleNotFoundError as error:
        if (error.name or "").partition(".")[0] in _EXTRA_MODULES:
            raise MissingExtra(MISSING_EXTRA) from None
        raise
    build_server().start_io()
