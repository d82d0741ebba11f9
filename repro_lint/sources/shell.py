"""What a launch script runs: its commands with variables and arrays expanded, in the order bash
would see them, read from the syntax tree of `shell_syntax`.

This is not a shell. It follows what launch scripts are made of (assignments, `export`, arrays,
`${VAR}` / `${ARR[@]}` / `${VAR:-default}` expansions, commands held in strings and run through
`bash -c`, here-documents fed to `sbatch` or `bash`, commands run by `$(...)`) and marks every value
it cannot know (`$1`, `$(pwd)`, a variable set only by the environment) as unknown, so the checks can
stay silent about it. A variable given different values in different branches of an `if` is unknown
after it. Text in quotes is split at blanks like the rest: a string of options (`OPTS="--a --b"`,
`bash -c "python train.py --a"`) is read as the words it holds.

Every word remembers where its text was written (`origin`, so a finding lands on the flag the user
typed, even inside an array defined higher up) and which word of the command produced it (`at`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from repro_lint.sources.shell_syntax import Node, Parsed, SyntaxProblem

_BRACED = re.compile(r"^\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])(?P<index>\[[^\]]*\])?(?P<op>:?[-=])?")
_BLANKS = re.compile(r"(\s+)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LEADING_BLANK = re.compile(r"(?:\s|\\\r?\n)*")
_PREFIXES = frozenset({"time", "nohup", "exec", "command", "builtin"})
# Commands whose here-document is a script of its own, run with the variables of this one.
_SCRIPT_CONSUMERS = frozenset({"sbatch", "bash", "sh", "zsh", "srun", "salloc"})
_BLOCKS = frozenset({"program", "compound_statement", "do_group", "pipeline", "negated_command"})
# Statements whose parts may or may not run: what they assign is only one possibility.
_BRANCHES = frozenset({"if_statement", "elif_clause", "else_clause", "while_statement", "for_statement", "c_style_for_statement", "case_statement", "case_item", "function_definition"})
# Parts of a branching statement that are not commands (`for x in WORDS`, `case WORD in PATTERN)`).
_NOT_RUN = frozenset({"variable", "value"})
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_DOUBLE_QUOTED = frozenset({"string", "translated_string"})
_QUOTED_ESCAPES = '$`"\\\n'  # what a backslash escapes inside double quotes
_UNKNOWN = frozenset({"arithmetic_expansion", "command_substitution", "process_substitution", "ERROR"})


@dataclass(frozen=True)
class Word:
    """One word after expansion. `known` is False when part of it came from something repro-lint
    cannot know; `text` then keeps that part as written (`${WORKSPACE}/pretrain_gpt.py`)."""

    text: str
    origin: int
    at: int
    known: bool = True
    alternative: bool = False  # set on one path through the script only (see _Interpreter._assign)


Value = tuple[Word, ...]


@dataclass(frozen=True)
class Assignment:
    """`NAME=value`: `value` is None when it cannot be known; `value_start`/`value_end` delimit the
    value's source text, which a fix replaces."""

    name: str
    value: Value | None
    start: int
    value_start: int
    value_end: int
    exported: bool


@dataclass
class Command:
    words: list[Word]
    assignments: list[Assignment]
    start: int
    end: int


@dataclass
class Script:
    commands: list[Command] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    comments: list[tuple[int, int]] = field(default_factory=list)
    errors: list[SyntaxProblem] = field(default_factory=list)


@dataclass(frozen=True)
class _Piece:
    """Part of a word before expansion: text as it reads (`literal`), a `$` reference to look up, or
    text that cannot be known (`$(...)`)."""

    kind: str
    text: str
    origin: int
    node: Node | None = None


def _glue(left: Word, right: Word) -> Word:
    return Word(left.text + right.text, left.origin, left.at, left.known and right.known, left.alternative or right.alternative)


class _Interpreter:
    def __init__(self) -> None:
        self.variables: dict[str, Value | None] = {}
        self.script = Script()

    def read(self, parsed: Parsed) -> None:
        self.script.comments.extend(parsed.comments())
        self.script.errors.extend(parsed.errors)
        self._statement(parsed, parsed.root, inside=False)

    # --- statements -------------------------------------------------------------------------

    def _statement(self, parsed: Parsed, node: Node, inside: bool) -> None:
        kind = node.type
        if kind in _BLOCKS:
            for child in node.named_children:
                self._statement(parsed, child, inside)
        elif kind in _BRANCHES:
            for index, child in enumerate(node.children):
                if child.is_named and node.field_name_for_child(index) not in _NOT_RUN:
                    self._statement(parsed, child, inside=True)
        elif kind == "list":  # `a && b || c`: what follows the first may not run
            for index, child in enumerate(node.named_children):
                self._statement(parsed, child, inside or index > 0)
        elif kind == "subshell":
            self._subshell(parsed, node, inside)
        elif kind == "redirected_statement":
            self._redirected(parsed, node, inside)
        elif kind in ("command", "declaration_command", "unset_command", "variable_assignment", "variable_assignments"):
            if not parsed.broken(node):
                self._simple(parsed, node, inside)

    def _subshell(self, parsed: Parsed, node: Node, inside: bool) -> None:
        """Commands run in a subshell (`( ... )`, `$(...)`): what they assign is lost after it."""
        saved = dict(self.variables)
        for child in node.named_children:
            self._statement(parsed, child, inside)
        self.variables.clear()
        self.variables.update(saved)

    def _redirected(self, parsed: Parsed, node: Node, inside: bool) -> None:
        body = node.child_by_field_name("body")
        if body is None:
            return
        if body.type == "command":
            # Words after a redirection's target are the command's (`cmd > log --flag`), though
            # tree-sitter-bash files them under the redirection.
            extra = [target for redirect in node.children_by_field_name("redirect") for target in redirect.children_by_field_name("destination")[1:]]
            if not parsed.broken(node):
                self._simple(parsed, body, inside, extra, parsed.end(node))
        else:
            self._statement(parsed, body, inside)
        name = body.child_by_field_name("name") if body.type == "command" else None
        if name is None or parsed.text_of(name).rpartition("/")[2] not in _SCRIPT_CONSUMERS:
            return
        for redirect in node.children_by_field_name("redirect"):
            for part in redirect.children:
                if part.type == "heredoc_body":
                    self.read(Parsed(parsed.text_of(part), parsed.start(part)))

    def _simple(self, parsed: Parsed, node: Node, inside: bool, extra: Sequence[Node] = (), end: int | None = None) -> None:
        start, end = parsed.start(node), parsed.end(node) if end is None else end
        kind = node.type
        if kind == "unset_command":
            for child in node.named_children:
                self.variables.pop(parsed.text_of(child), None)
            return
        if kind in ("variable_assignment", "variable_assignments", "declaration_command"):
            exported = kind == "declaration_command" and parsed.text_of(node.children[0]) == "export"
            nodes = [node] if kind == "variable_assignment" else node.named_children
            assignments = [self._assignment(parsed, child, exported) for child in nodes if child.type == "variable_assignment"]
            for assignment in assignments:
                self._assign(assignment, inside)
            self.script.commands.append(Command([], assignments, start, end))
            return
        parts = [child for index, child in enumerate(node.children) if node.field_name_for_child(index) in ("name", "argument") or child.type == "variable_assignment"]
        groups = list(_one_per_word([*parts, *extra]))
        # `NAME=value program ...` sets NAME for that program only.
        assignments = [self._assignment(parsed, group[0], True, group[1:]) for group in groups if group[0].type == "variable_assignment"]
        words = [word for group in groups if group[0].type != "variable_assignment" for word in self._expand(parsed, *group)]
        if not words:  # what tree-sitter-bash took for a command was the rest of an assignment
            assignments = [replace(assignment, exported=False) for assignment in assignments]
            for assignment in assignments:
                self._assign(assignment, inside)
        while words and words[0].known and words[0].text in _PREFIXES:
            words.pop(0)
        self.script.commands.append(Command(words, assignments, start, end))

    # --- assignments ------------------------------------------------------------------------

    def _assignment(self, parsed: Parsed, node: Node, exported: bool, rest: Sequence[Node] = ()) -> Assignment:
        """`rest`: the nodes of the same word that tree-sitter-bash split from it (`_one_per_word`)."""
        target = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        operator = next((child for child in node.children if child.type in ("=", "+=")), None)
        assert target is not None and operator is not None
        name_node = target.child_by_field_name("name") if target.type == "subscript" else target
        name = parsed.text_of(name_node) if name_node is not None else parsed.text_of(target)
        value_start = parsed.end(operator)
        value_end = parsed.end(rest[-1]) if rest else parsed.end(value_node) if value_node is not None else value_start
        value: Value | None
        if value_node is None:
            value = ()
        elif value_node.type == "array":
            # Each element is its own word of the value, found where it was written.
            value = tuple(word for element in value_node.named_children if element.type != "comment" for word in self._expand(parsed, element))
        else:
            value = tuple(replace(word, at=value_start) for word in self._expand(parsed, value_node, *rest))
        if target.type == "subscript":
            value = None  # one element of an array: the array as a whole is no longer known
        elif operator.type == "+=":
            existing = self.variables.get(name, ())
            value = None if existing is None or value is None else (*existing, *value)
        return Assignment(name, value, parsed.start(node), value_start, value_end, exported)

    def _assign(self, assignment: Assignment, inside: bool = False) -> None:
        """Set a variable. Set inside a branch to something other than what it held, it may hold
        either. A value is then unknown, but a list of options keeps the words of both, marked
        `alternative`: a check that an option is absent (`--deterministic-mode`) reads them all, a
        check of one value stays silent."""
        self.script.assignments.append(assignment)
        name, new = assignment.name, assignment.value
        old = self.variables.get(name)
        if not inside or name not in self.variables or _same_text(old, new):
            self.variables[name] = new
        elif old is None or new is None or not any(word.text.startswith("-") for word in (*old, *new)):
            self.variables[name] = None
        elif new[: len(old)] == old:  # appended to in the branch (`ARGS+=(...)`)
            self.variables[name] = (*old, *_alternatives(new[len(old) :]))
        else:
            self.variables[name] = (*_alternatives(old), *_alternatives(new))

    # --- words ------------------------------------------------------------------------------

    def _expand(self, parsed: Parsed, *nodes: Node) -> list[Word]:
        """The words one argument gives: literal text split at blanks, references replaced by their
        values, adjacent parts glued (`${ROOT}/train.py`)."""
        at = parsed.start(nodes[0])
        words: list[Word] = []
        joinable = False  # whether the next text continues the last word (no blank between them)
        for piece in _rejoined(piece for node in nodes for piece in self._pieces(parsed, node)):
            if piece.kind == "literal":
                offset = 0
                for part in _BLANKS.split(piece.text):
                    if part.isspace():
                        joinable = False
                    elif part:
                        word = Word(part, piece.origin + offset, at)
                        if joinable and words:
                            words[-1] = _glue(words[-1], word)
                        else:
                            words.append(word)
                        joinable = True
                    offset += len(part)
                continue
            expansion = self._reference(parsed, piece, at) if piece.kind == "reference" else [Word(piece.text, piece.origin, at, known=False)]
            for index, word in enumerate(expansion):
                if index == 0 and joinable and words:
                    words[-1] = _glue(words[-1], word)
                else:
                    words.append(word)
            joinable = True
        return words

    def _pieces(self, parsed: Parsed, node: Node) -> Iterator[_Piece]:
        kind = node.type
        if kind in _DOUBLE_QUOTED:
            yield from self._quoted(parsed, node)
        elif kind in ("concatenation", "command_name"):
            for child in node.children:
                yield from self._pieces(parsed, child)
        elif kind == "raw_string":
            yield _Piece("literal", parsed.text_of(node)[1:-1], parsed.start(node) + 1)
        elif kind == "ansi_c_string":
            yield _Piece("literal", parsed.text_of(node)[2:-1], parsed.start(node) + 2)
        elif kind in _UNKNOWN or kind in ("simple_expansion", "expansion"):
            # tree-sitter-bash may start the node at the blank (or line continuation) before the `$`.
            text, start = parsed.text_of(node), parsed.start(node)
            blank = _LEADING_BLANK.match(text).end()  # type: ignore[union-attr]
            if blank:
                yield _Piece("literal", " ", start)
            if kind in _SUBSTITUTIONS:
                self._subshell(parsed, node, inside=True)
            known = kind in ("simple_expansion", "expansion") and not node.has_error
            yield _Piece("reference" if known else "unknown", text[blank:], start + blank, node)
        elif kind == "$":  # a `$` tree-sitter-bash left apart from its name (see _one_per_word)
            yield _Piece("dollar", "$", parsed.start(node))
        else:  # a word, a number, a pattern: the text as written, its escapes undone
            yield from _unescaped(parsed.text_of(node), parsed.start(node), None)

    def _quoted(self, parsed: Parsed, node: Node) -> Iterator[_Piece]:
        """The parts of a `"..."` string: its expansions, and the text around them (read from the
        source, as tree-sitter-bash leaves some of it out of the tree)."""
        text, start = parsed.text_of(node), parsed.start(node)
        position = text.index('"') + 1
        close = len(text) - 1 if len(text) > position and text.endswith('"') else len(text)
        for child in node.named_children:
            if child.type == "string_content":
                continue
            yield from _unescaped(text[position : parsed.start(child) - start], start + position, _QUOTED_ESCAPES)
            yield from self._pieces(parsed, child)
            position = parsed.end(child) - start
        yield from _unescaped(text[position:close], start + position, _QUOTED_ESCAPES)

    def _reference(self, parsed: Parsed, piece: _Piece, at: int) -> list[Word]:
        """The words of one `$...` reference; a single unknown word when it cannot be known."""
        unknown = [Word(piece.text, piece.origin, at, known=False)]
        if piece.text.startswith("${"):
            match = _BRACED.match(piece.text)
            if match is None or not piece.text.endswith("}"):
                return unknown
            name, index, op = match.group("name", "index", "op")
            rest = piece.text[match.end() : -1]
            if op is None and rest:
                return unknown  # `${VAR#prefix}`, `${VAR:0:3}`, ...
        else:
            name, index, op = piece.text[1:], None, None
        if name not in self.variables:
            if op is not None and piece.node is not None:
                # Unset here, so the default applies (unless the environment sets it).
                default = _after_operator(piece.node)
                return [replace(word, at=at) for child in default for word in self._expand(parsed, child)]
            return unknown
        value = self.variables[name]
        if value is None:
            return unknown
        if index and index not in ("[@]", "[*]"):
            position = index[1:-1]
            if not position.isdigit():
                return unknown
            value = value[int(position) : int(position) + 1]
        return [replace(word, at=at) for word in value]


def _one_per_word(nodes: Sequence[Node]) -> Iterator[list[Node]]:
    """Arguments with no blank between them are one word to bash. tree-sitter-bash sometimes splits
    one (`${ROOT}/$NAME/x` gives `${ROOT}/$` and `NAME/x`): the parts are glued again, and the `$`
    it left alone is joined to its name again (`_rejoined`)."""
    merged: list[list[Node]] = []
    for node in nodes:
        if merged and merged[-1][-1].end_byte == node.start_byte:
            merged[-1].append(node)
        else:
            merged.append([node])
    return iter(merged)


def _rejoined(pieces: Iterator[_Piece]) -> Iterator[_Piece]:
    """The pieces, with a `$` left apart from the name after it made a reference again."""
    dollar = None
    for piece in pieces:
        if dollar is not None:
            name = _NAME.match(piece.text) if piece.kind == "literal" else None
            if name is None:
                yield replace(dollar, kind="unknown")
            else:
                yield _Piece("reference", "$" + name.group(), dollar.origin)
                piece = replace(piece, text=piece.text[name.end() :], origin=piece.origin + name.end())
            dollar = None
        if piece.kind == "dollar":
            dollar = piece
        elif piece.text or piece.kind != "literal":
            yield piece
    if dollar is not None:
        yield replace(dollar, kind="unknown")


def _after_operator(node: Node) -> list[Node]:
    """The nodes of the default in `${VAR:-default}`."""
    for index, child in enumerate(node.children):
        if node.field_name_for_child(index) == "operator":
            return [part for part in node.children[index + 1 :] if part.type != "}"]
    return []


def _unescaped(text: str, origin: int, escapable: str | None) -> Iterator[_Piece]:
    """Literal text with its backslashes undone: any character after one outside quotes, one of
    `escapable` inside double quotes; a backslash-newline is dropped."""
    start = 0
    position = text.find("\\")
    while position != -1 and position + 1 < len(text):
        following = text[position + 1]
        if escapable is not None and following not in escapable:
            position = text.find("\\", position + 1)
            continue
        if position > start:
            yield _Piece("literal", text[start:position], origin + start)
        start = position + 2 if following == "\n" else position + 1
        position = text.find("\\", position + 2)
    if start < len(text):
        yield _Piece("literal", text[start:], origin + start)


def _alternatives(words: Value) -> Value:
    return tuple(replace(word, alternative=True) for word in words)


def _same_text(left: Value | None, right: Value | None) -> bool:
    if left is None or right is None:
        return False
    return [word.text for word in left] == [word.text for word in right]


def interpret(text: str) -> Script:
    interpreter = _Interpreter()
    interpreter.read(Parsed(text))
    return interpreter.script
