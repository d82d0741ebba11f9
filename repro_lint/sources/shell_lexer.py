"""Shell words with their places in the script, read with the standard library's `shlex`.

`shlex` does the quoting and escaping (POSIX rules), but it knows no positions and treats `#` and
line continuations differently from bash. Rather than rewrite its state machine, the script reaches it
through a small character stream that:

- records where each character came from, so every word knows its start and end offsets;
- drops backslash-newline continuations before `shlex` sees them, except inside single quotes and
  after another backslash, as bash does (so `--flag \\` + newline + `--next` gives two words);
- reads `#` as a comment only at the start of a word, as bash does (`${#ARR[@]}`, `a#b` stay words),
  records the comment, and hands back the newline that ends it, so the comment still ends its command.

Newlines and `;&|<>` are punctuation: they come back as operator tokens, which the interpreter in
`shell.py` uses to split commands and to skip redirection targets. Here-documents are skipped unless
their body is itself a script (`sbatch <<EOF`, `bash <<EOF`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

OPERATOR_CHARACTERS = ";&|<>\n"
# Commands whose here-document is a script of its own, run with the variables of this one.
_SCRIPT_CONSUMERS = frozenset({"sbatch", "bash", "sh", "zsh", "srun", "salloc"})
_RESERVED = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time", "exec", "nohup"})


class ShellSyntaxError(Exception):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


@dataclass(frozen=True)
class Token:
    """A word (quotes removed) or an operator, and the offsets of its source text."""

    value: str
    start: int
    end: int
    operator: bool = False


@dataclass(frozen=True)
class Comment:
    start: int
    end: int


@dataclass(frozen=True)
class Lexed:
    tokens: tuple[Token, ...]
    comments: tuple[Comment, ...]


class _Stream:
    """What `shlex` reads: one character at a time, with continuations and comments handled."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.position = 0
        self.last = 0  # offset of the character read last
        self.comments: list[Comment] = []
        self.lexer: _Lexer | None = None

    def _state(self) -> str | None:
        return self.lexer.state if self.lexer is not None else " "

    def read(self, size: int = 1) -> str:
        text = self.text
        state = self._state()
        while state != "'" and state != "\\" and text.startswith("\\", self.position):
            if text.startswith("\\\n", self.position):
                self.position += 2
            elif text.startswith("\\\r\n", self.position):
                self.position += 3
            else:
                break
        if self.position >= len(text):
            self.last = len(text)
            return ""
        if text[self.position] == "#" and state in (" ", "c"):
            end = text.find("\n", self.position)
            end = len(text) if end == -1 else end
            self.comments.append(Comment(self.position, end))
            self.position = end
            return self.read()
        self.last = self.position
        self.position += 1
        return text[self.last]

    def readline(self) -> str:  # shlex only calls this for its commenters, which are disabled
        return ""


class _Lexer(shlex.shlex):
    """`shlex` that notes the offset at which each token starts: the moment it leaves its
    between-tokens state ' ' is the moment it reads the token's first character."""

    token_start = 0

    @property  # type: ignore[override]
    def state(self) -> str | None:
        return self._state

    @state.setter
    def state(self, value: str | None) -> None:
        if getattr(self, "_state", None) == " " and value not in (" ", None):
            self.token_start = self.instream.last
        self._state = value


def lex(text: str) -> Lexed:
    """Every token of a script. Raises ShellSyntaxError for an unclosed quote."""
    stream = _Stream(text)
    lexer = _Lexer(stream, posix=True, punctuation_chars=OPERATOR_CHARACTERS)  # type: ignore[arg-type]
    stream.lexer = lexer
    lexer.whitespace = " \t\r"
    lexer.commenters = ""
    lexer.whitespace_split = True
    tokens: list[Token] = []
    command_start = 0  # index in `tokens` of the current command's first token
    heredocs: list[str] = []  # delimiters of the here-documents to skip after this line
    while True:
        try:
            value = lexer.get_token()
        except ValueError as error:
            raise ShellSyntaxError(str(error).lower(), lexer.token_start) from None
        if value is None:
            break
        start, end = lexer.token_start, max(stream.last, lexer.token_start)
        operator = bool(value) and all(char in OPERATOR_CHARACTERS for char in value) and text[start] in OPERATOR_CHARACTERS
        tokens.append(Token(value, start, end if operator else _trim(text, start, end), operator))
        if not operator:
            if len(tokens) >= 2 and tokens[-2].operator and tokens[-2].value == "<<":
                if _command_name(tokens[command_start:]) not in _SCRIPT_CONSUMERS:
                    heredocs.append(value.removeprefix("-"))
            continue
        if "\n" in value or not value.strip(";&|"):
            command_start = len(tokens)
        if "\n" in value and heredocs:
            stream.position = _skip_heredocs(text, start + value.index("\n") + 1, heredocs)
            heredocs = []
            # The lexer may have read one character of the body ahead; start afresh after it.
            lexer._pushback_chars.clear()  # type: ignore[attr-defined]
            lexer.state = " "
    return Lexed(tuple(tokens), tuple(stream.comments))


def _trim(text: str, start: int, end: int) -> int:
    """A token's end without the whitespace or continuation the lexer read past."""
    while end > start and text[end - 1] in " \t\r\n\\":
        end -= 1
    return end


def _command_name(tokens: list[Token]) -> str:
    """The program a command runs: its first word after reserved words and variable assignments."""
    for token in tokens:
        if token.operator:
            return ""
        if token.value in _RESERVED or ("=" in token.value and token.value.partition("=")[0].isidentifier()):
            continue
        return token.value.rpartition("/")[2]
    return ""


def _skip_heredocs(text: str, position: int, delimiters: list[str]) -> int:
    """The offset after the bodies of the here-documents opened on the line that just ended."""
    for delimiter in delimiters:
        while position < len(text):
            end = text.find("\n", position)
            end = len(text) if end == -1 else end
            line = text[position:end].rstrip("\r")
            position = min(end + 1, len(text))
            if line.lstrip("\t") == delimiter:
                break
    return position
