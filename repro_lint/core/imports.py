"""Import statements' module names, as plain text: shared by the facts (from LibCST's trees) and by
the engine's reading of import lines before any parse (engine/closure.py), which must not load
LibCST."""

from __future__ import annotations

# Names no statement binds are the builtins module's (`builtins.open`), which the interpreter holds:
# Python finds it before any file on its path, so no project module is what such a name denotes.
BUILTINS = "builtins"


def is_builtin(name: str) -> bool:
    """Whether the dotted `name` is the builtins module or in it."""
    return name.partition(".")[0] == BUILTINS


def absolute_module(module: str, level: int, package: str) -> str | None:
    """The absolute name of `from <level dots><module> import ...` inside `package`."""
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base) or None
