"""What a launch script runs: its commands with variables and arrays expanded, in the order bash
would see them.

This is not a shell. It follows the constructs launch scripts are made of (assignments, `export`,
arrays, `${VAR}` / `${ARR[@]}` / `${VAR:-default}` expansions, commands split over lines, commands
held in strings and run through `bash -c`) and marks every value it cannot know (`$1`, `$(pwd)`, a
variable set only by the environment) as unknown, so the checks can stay silent about it. A variable
given different values in different branches of an `if` is unknown after it.

Every word remembers where its text was written (`origin`, so a finding lands on the flag the user
typed, even inside an array defined higher up) and which word of the command produced it (`at`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from repro_lint.sources.shell_lexer import Lexed, Token

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_ASSIGNMENT = re.compile(rf"^(?P<name>{_NAME})(?P<index>\[[^\]]*\])?(?P<append>\+?)=")
_BRACED = re.compile(rf"^(?P<name>{_NAME}|[0-9@*#?$!-])(?P<index>\[[^\]]*\])?(?:(?P<op>:?[-=])(?P<default>.*))?$", re.DOTALL)
_SIMPLE = re.compile(rf"{_NAME}|[0-9@*#?$!-]")
_OPENERS = frozenset({"if", "case", "for", "while", "until", "select"})
_CLOSERS = frozenset({"fi", "esac", "done"})
_PREFIXES = frozenset({"then", "else", "elif", "do", "{", "}", "!", "time", "nohup", "exec", "command", "builtin"})
_DECLARATIONS = frozenset({"export", "declare", "local", "readonly", "typeset"})


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


def _glue(left: Word, right: Word) -> Word:
    return Word(left.text + right.text, left.origin, left.at, left.known and right.known, left.alternative or right.alternative)


class _Expander:
    """Expands one token's text into words, given the variables known so far."""

    def __init__(self, variables: dict[str, Value | None]) -> None:
        self.variables = variables

    def expand(self, value: str, raw: str, start: int, at: int) -> list[Word]:
        words: list[Word] = []
        joinable = False  # whether the next text continues the last word (no blank between them)
        cursor = 0  # how far into `raw` the text expanded so far was found
        literal_only = raw.startswith("'")  # single quotes: nothing inside is expanded
        for kind, text in ([("literal", value)] if literal_only else _segments(value)):
            if kind == "literal":
                for part in re.split(r"(\s+)", text):
                    if not part:
                        continue
                    if part.isspace():
                        joinable = False
                        continue
                    found = raw.find(part, cursor)
                    origin = start + found if found >= 0 else start
                    cursor = found + len(part) if found >= 0 else cursor
                    word = Word(part, origin, at)
                    if joinable and words:
                        words[-1] = _glue(words[-1], word)
                    else:
                        words.append(word)
                    joinable = True
                continue
            found = raw.find(text, cursor)
            origin = start + found if found >= 0 else start
            cursor = found + len(text) if found >= 0 else cursor
            expansion = self.reference(text, origin, at)
            for index, word in enumerate(expansion):
                if index == 0 and joinable and words:
                    words[-1] = _glue(words[-1], word)
                else:
                    words.append(word)
                joinable = True
        return words

    def reference(self, text: str, origin: int, at: int) -> list[Word]:
        """The words of one `$...` reference; a single unknown word when it cannot be known."""
        unknown = [Word(text, origin, at, known=False)]
        if text.startswith("${") and text.endswith("}"):
            match = _BRACED.match(text[2:-1])
            if match is None:
                return unknown
            name, index, op, default = match.group("name", "index", "op", "default")
        elif text.startswith("$") and _SIMPLE.fullmatch(text[1:]):
            name, index, op, default = text[1:], None, None, None
        else:
            return unknown  # $(...), `...`, $((...))
        if name not in self.variables:
            if op is not None and default is not None:
                # Unset here, so the default applies (unless the environment sets it).
                return self.expand(default, default, origin + len(text) - 1 - len(default), at)
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


def _segments(value: str) -> Iterator[tuple[str, str]]:
    """Literal text and `$` references, in order."""
    position = 0
    literal_start = 0
    while position < len(value):
        char = value[position]
        end = None
        if char == "$" and position + 1 < len(value):
            end = _reference_end(value, position)
        elif char == "`":
            close = value.find("`", position + 1)
            end = len(value) if close == -1 else close + 1
        if end is None:
            position += 1
            continue
        if literal_start < position:
            yield "literal", value[literal_start:position]
        yield "reference", value[position:end]
        position = literal_start = end
    if literal_start < len(value):
        yield "literal", value[literal_start:]


def _reference_end(value: str, start: int) -> int | None:
    following = value[start + 1]
    if following in "{(":
        closing = "}" if following == "{" else ")"
        depth = 0
        for position in range(start + 1, len(value)):
            if value[position] == following:
                depth += 1
            elif value[position] == closing:
                depth -= 1
                if depth == 0:
                    return position + 1
        return len(value)
    match = _SIMPLE.match(value, start + 1)
    return match.end() if match else None


class _Interpreter:
    def __init__(self, text: str) -> None:
        self.text = text
        self.variables: dict[str, Value | None] = {}
        self.expander = _Expander(self.variables)
        self.depth = 0
        self.script = Script()

    def run(self, lexed: Lexed) -> Script:
        tokens = list(lexed.tokens)
        command: list[Token] = []
        conditional = False
        index = 0
        while index < len(tokens):
            token = tokens[index]
            if token.operator and (("\n" in token.value) or not token.value.strip(";&|")):
                self._command(command, conditional)
                conditional = token.value.strip() in ("&&", "||")
                command = []
                index += 1
                continue
            if not token.operator and _array_start(self._raw(token)) and (not command or self._only_assignments(command)):
                index = self._array(tokens, index, command)
                continue
            command.append(token)
            index += 1
        self._command(command, conditional)
        return self.script

    def _raw(self, token: Token) -> str:
        return self.text[token.start : token.end]

    def _only_assignments(self, tokens: list[Token]) -> bool:
        return all(_ASSIGNMENT.match(self._raw(token)) or token.value in _DECLARATIONS or token.value.startswith("-") for token in tokens)

    def _array(self, tokens: list[Token], index: int, command: list[Token]) -> int:
        """Reads `NAME=( ... )` over any number of lines into one assignment; returns the next index."""
        opener = tokens[index]
        match = _ASSIGNMENT.match(opener.value)
        assert match is not None
        elements: list[Word] = []
        first = opener.value[match.end() + 1 :]
        offset = opener.start + len(match.group(0)) + 1
        pending = [(first, self.text[offset : opener.end], offset)] if first else []
        end = opener.end
        closed = opener.value.endswith(")") and len(opener.value) > match.end() + 1
        if closed:
            pending = [(first[:-1], self.text[offset : opener.end - 1], offset)] if first[:-1] else []
        index += 1
        while not closed and index < len(tokens):
            token = tokens[index]
            index += 1
            if token.operator:
                continue
            raw = self._raw(token)
            end = token.end
            if raw.endswith(")"):
                closed = True
                if token.value[:-1]:
                    pending.append((token.value[:-1], raw[:-1], token.start))
                break
            pending.append((token.value, raw, token.start))
        for value, raw, start in pending:
            elements.extend(self.expander.expand(value, raw, start, start))
        existing = self.variables.get(match.group("name"), ()) if match.group("append") else ()
        result: Value | None = None if existing is None else (*existing, *elements)
        exported = any(token.value == "export" for token in command)
        assignment = Assignment(match.group("name"), result, opener.start, opener.start + len(match.group(0)), end, exported)
        self._assign(assignment, self.depth > 0)
        self.script.commands.append(Command([], [assignment], opener.start, end))
        return index

    def _command(self, tokens: list[Token], conditional: bool) -> None:
        if not tokens:
            return
        start, end = tokens[0].start, tokens[-1].end
        while tokens and not tokens[0].operator and tokens[0].value in _PREFIXES | _OPENERS | _CLOSERS:
            word = tokens.pop(0).value
            if word in _OPENERS:
                self.depth += 1
            elif word in _CLOSERS:
                self.depth = max(self.depth - 1, 0)
            if word in _OPENERS and word != "if" and word != "while" and word != "until":
                return  # `for x in ...`, `case x in`: nothing here runs a program
        inside = conditional or self.depth > 0
        assignments: list[Assignment] = []
        while tokens and not tokens[0].operator and _ASSIGNMENT.match(self._raw(tokens[0])):
            assignments.append(self._assignment(tokens.pop(0), exported=False))
        words = self._words(tokens)
        if not words:
            for assignment in assignments:
                self._assign(assignment, inside)
            self.script.commands.append(Command([], assignments, start, end))
            return
        program = words[0].text
        if program in _DECLARATIONS:
            for token in tokens[1:]:
                if not token.operator and _ASSIGNMENT.match(self._raw(token)):
                    assignment = self._assignment(token, exported=program == "export")
                    assignments.append(assignment)
                    self._assign(assignment, inside)
            words = []
        elif program == "unset":
            for word in words[1:]:
                self.variables.pop(word.text, None)
        else:
            # `NAME=value program ...` sets NAME for that program only.
            assignments = [replace(assignment, exported=True) for assignment in assignments]
        self.script.commands.append(Command(words, assignments, start, end))

    def _words(self, tokens: list[Token]) -> list[Word]:
        words: list[Word] = []
        skip_next = False
        for index, token in enumerate(tokens):
            if token.operator:
                skip_next = True  # a redirection: its target is not an argument
                continue
            if skip_next:
                skip_next = False
                continue
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            if following is not None and following.operator and following.start == token.end and token.value.isdigit():
                continue  # the file descriptor of a redirection (`2>&1`)
            words.extend(self.expander.expand(token.value, self._raw(token), token.start, token.start))
        return words

    def _assignment(self, token: Token, exported: bool) -> Assignment:
        raw = self._raw(token)
        match = _ASSIGNMENT.match(raw)
        assert match is not None
        name = match.group("name")
        value_text = token.value[len(match.group(0)) :] if token.value.startswith(match.group(0)) else token.value.partition("=")[2]
        value_start = token.start + match.end()
        value: Value | None = tuple(self.expander.expand(value_text, raw[match.end() :], value_start, value_start))
        if match.group("index"):
            value = None  # one element of an array: the array as a whole is no longer known
        elif match.group("append"):
            existing = self.variables.get(name, ())
            value = None if existing is None or value is None else (*existing, *value)
        return Assignment(name, value, token.start, value_start, token.end, exported)

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


def _alternatives(words: Value) -> Value:
    return tuple(replace(word, alternative=True) for word in words)


def _same_text(left: Value | None, right: Value | None) -> bool:
    if left is None or right is None:
        return False
    return [word.text for word in left] == [word.text for word in right]


def _array_start(raw: str) -> bool:
    match = _ASSIGNMENT.match(raw)
    return match is not None and raw[match.end() : match.end() + 1] == "("


def interpret(text: str, lexed: Lexed) -> Script:
    return _Interpreter(text).run(lexed)
