"""Analysing one Python file: parse once, run every enabled local rule and the facts collector in one
traversal, and turn what they report into positioned findings and fixes."""

from __future__ import annotations

import re
import symtable
import sys
import threading
from collections.abc import Sequence

import libcst as cst

from repro_lint.analysis.result import FileAnalysis, ModuleIdentity, syntax_error
from repro_lint.analysis.suppression import python_suppressions
from repro_lint.analysis.wrapping import wrap_replacement
from repro_lint.core.findings import Edit, Finding, Fix
from repro_lint.core.problems import Problem
from repro_lint.core.settings import Settings
from repro_lint.core.source import LineIndex, Position
from repro_lint.facts.context import BatchedVisitor, FileContext, NodeEdit, PendingFix, PendingReport
from repro_lint.facts.module_facts import FactsCollector
from repro_lint.facts.positions import Positions
from repro_lint.rules.base import Rule

_VALIDATE = cst.CSTNode.__post_init__
_PARSER_STACK = 512 * 1024 * 1024
# LibCST's tree and the positions take about 3.5 KB per token (measured on real files from 49,000 to
# 268,000 tokens): this many keep one file's analysis within 400 MB. The largest hand-written
# training code seen (peft's and Megatron-LM's biggest files) has under 70,000; beyond are generated
# tables. A file has no more tokens than characters, so only longer ones are counted.
MAX_TOKENS = 100_000
_TOKEN = re.compile(r"\w+|[^\w\s]")
# The most Python frames the analysis's recursive walks take per level of the tree (a node's visit,
# its fields' visits, its code generation and parentheses).
_FRAMES_PER_LEVEL = 5
_TOO_DEEP = "cannot parse: the code is nested too deeply for Python to compile it"
_TOO_DEEP_TO_ANALYSE = "cannot analyse: the code is nested too deeply for repro-lint to follow"


def _trusted(node: cst.CSTNode) -> None:
    pass


def parse(text: str) -> cst.Module:
    """The parsed module. LibCST checks every node it builds in `__post_init__`, which guards nodes
    built by hand; the parser's are valid by its grammar (LibCST's own PERF note there says as much),
    and skipping the check saves a sixth of the parse. Nodes built later, by fixes, are checked.

    The parse runs on a thread with a large stack: LibCST's native parser recurses on the machine
    stack as deep as the code nests, and on a default stack a chain of 10,000 `and`s kills the
    process (a segmentation fault no `except` can catch). The stack is reserved, not used: only
    the depth a file reaches is touched."""
    outcome: list[cst.Module | BaseException] = []

    def run() -> None:
        cst.CSTNode.__post_init__ = _trusted  # type: ignore[method-assign]
        try:
            outcome.append(cst.parse_module(text))
        except BaseException as error:  # handed to the calling thread, which raises it
            outcome.append(error)
        finally:
            cst.CSTNode.__post_init__ = _VALIDATE  # type: ignore[method-assign]

    default = threading.stack_size(_PARSER_STACK)
    try:
        thread = threading.Thread(target=run, name="repro-lint parser")
        thread.start()
    finally:
        threading.stack_size(default)
    thread.join()
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def parses(text: str) -> bool:
    """Whether a fixed text is still Python the analysis reads. What CPython's parser reads is (a file
    fixed was one LibCST read, and no fix writes newer syntax), and it answers for a fraction of
    LibCST's time and memory: a fix round of transformers parsed its largest files with LibCST, and
    kept 90 MB more than before. Code CPython refuses may be syntax newer than this Python, which
    LibCST may still read, unless it is too deep or holds NUL bytes (which LibCST refuses too)."""
    refused = _cpython_refusal(text)
    if refused is None:
        return True
    if isinstance(refused, ValueError) or _depth_reason(refused) is not None:
        return False
    try:
        parse(text)
    except (cst.ParserSyntaxError, RecursionError):
        return False
    return True


def _too_complex(text: str) -> str | None:
    """Why CPython itself cannot compile `text`, where the reason is its depth (nesting, or chains
    of operators or calls that nest as deep); None otherwise. Such code is refused before LibCST
    parses it, which would take minutes on it or crash outright. CPython's own parser is quick and
    bounds its depth: its limits are the ones a runnable file is within."""
    refused = _cpython_refusal(text)
    return _depth_reason(refused) if refused is not None else None


def _cpython_refusal(text: str) -> Exception | None:
    """What CPython's compiler raises on `text` as it parses it and builds its symbol table; None
    where it reads it. The symbol table is built from the parser's own tree, which `ast.parse` would
    copy into Python objects first: that copy took 8% of a file's analysis on transformers, the
    symbol table 3%. Its depth limit is the compiler's (Python 3.10's `ast.parse` has none, and
    crashes on a chain of 200,000 `+`); its other refusals (a duplicate argument) are no syntax
    LibCST refuses."""
    try:
        symtable.symtable(text, "<linted>", "exec")
    except (RecursionError, MemoryError, SyntaxError, ValueError) as error:
        return error
    return None


def _depth_reason(refused: Exception) -> str | None:
    """The message for a refusal of CPython's parser that is about depth; None for any other (a syntax
    error may be syntax newer than this Python's, which LibCST still reads; NUL bytes, LibCST reports
    with a position)."""
    if isinstance(refused, (RecursionError, MemoryError)):
        return _TOO_DEEP
    if isinstance(refused, SyntaxError) and refused.msg == "too many nested parentheses":
        return f"cannot parse: {refused.msg}"
    return None


def _parse_failure(text: str, error: cst.ParserSyntaxError) -> tuple[str, int, int]:
    """Message and position for a file LibCST cannot parse. CPython's compiler names the problem and
    its place more precisely, so its words are used when it rejects the code too."""
    try:
        compile(text, "<linted>", "exec", dont_inherit=True)
    except SyntaxError as python_error:
        return f"cannot parse: {python_error.msg}", python_error.lineno or 1, max((python_error.offset or 1) - 1, 0)
    except ValueError:
        pass
    return f"cannot parse: {error.message}", error.raw_line, error.raw_column


def analyze(
    text: str,
    display: str,
    identity: ModuleIdentity,
    rules: Sequence[type[Rule]],
    settings: Settings,
) -> FileAnalysis:
    if len(text) > MAX_TOKENS and (tokens := len(_TOKEN.findall(text))) > MAX_TOKENS:
        reason = f"too large to analyse within repro-lint's memory budget ({tokens:,} tokens; the limit is {MAX_TOKENS:,})"
        return FileAnalysis(display, [], None, problem=Problem(display, "skipped", reason))
    refused = _too_complex(text)
    if refused is not None:
        return syntax_error(display, refused, 1, 0)
    try:
        module = parse(text)
    except cst.ParserSyntaxError as error:
        return syntax_error(display, *_parse_failure(text, error))
    except RecursionError:
        return syntax_error(display, _TOO_DEEP_TO_ANALYSE, 1, 0)
    try:
        return _analyze_module(module, text, display, identity, rules, settings)
    except RecursionError:
        # Code CPython compiles, nested deeper than the analysis follows (LibCST's trees are walked
        # by recursion; a chain of 500 `+` or `elif` nests 500 levels deep there). In a shallow
        # tree, the recursion is a bug of the analysis, to be reported as one.
        if _deeper_than(module, sys.getrecursionlimit() // _FRAMES_PER_LEVEL):
            return syntax_error(display, _TOO_DEEP_TO_ANALYSE, 1, 0)
        raise


def _deeper_than(module: cst.Module, levels: int) -> bool:
    """Whether the tree nests more than `levels` deep (walked with a stack of its own)."""
    stack: list[tuple[cst.CSTNode, int]] = [(module, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > levels:
            return True
        stack.extend((child, depth + 1) for child in node.children)
    return False


def _analyze_module(
    module: cst.Module, text: str, display: str, identity: ModuleIdentity, rules: Sequence[type[Rule]], settings: Settings
) -> FileAnalysis:
    context = FileContext(module, identity.name, identity.is_package, settings, text)
    active = [rule(context) for rule in rules if not rule.required_text or any(token in text for token in rule.required_text)]
    collector = FactsCollector(context, identity.relative_path, identity.is_package)
    BatchedVisitor(context, [*active, collector]).traverse(module)

    positions = Positions(module, text)
    index = LineIndex(text)
    layout = (settings.line_length, module.default_indent)
    findings = [_finding(report, display, positions, index, layout) for report in context.reports]
    facts = collector.facts(positions)
    return FileAnalysis(display, findings, facts, python_suppressions(text))


def _finding(report: PendingReport, display: str, positions: Positions, index: LineIndex, layout: tuple[int, str]) -> Finding:
    start, end = positions.range(report.node)
    return Finding(
        report.rule.code,
        report.rule.name,
        report.message,
        display,
        start,
        end,
        _fix(report.fix, positions, index, layout) if report.fix is not None else None,
    )


def _fix(pending: PendingFix, positions: Positions, index: LineIndex, layout: tuple[int, str]) -> Fix:
    return Fix(pending.applicability, pending.message, tuple(_edit(edit, positions, index, layout) for edit in pending.edits))


def _edit(edit: NodeEdit, positions: Positions, index: LineIndex, layout: tuple[int, str]) -> Edit:
    """The text edit; a call the fix lengthens past the line length (`layout`: it and the module's
    indentation unit) is wrapped."""
    start, end = positions.range(edit.node)
    if edit.where == "line_before":
        at = Position(start.line, 0)
        return Edit(at, at, edit.content)
    if edit.where == "line_after":
        if end.line < index.line_count:
            at = Position(end.line + 1, 0)
            return Edit(at, at, edit.content)
        at = index.position(len(index.text))
        return Edit(at, at, "\n" + edit.content.removesuffix("\n"))
    return _minimal_replacement(index, start, end, wrap_replacement(index, start, end, edit.content, *layout))


def _minimal_replacement(index: LineIndex, start: Position, end: Position, content: str) -> Edit:
    """Shrink a node replacement to the words that actually change, so fixes of nested nodes rarely
    overlap and the user's formatting around them is untouched."""
    begin, finish = index.offset(start), index.offset(end)
    old = index.text[begin:finish]
    limit = min(len(old), len(content))
    prefix = 0
    while prefix < limit and old[prefix] == content[prefix]:
        prefix += 1
    while prefix and _inside_word(old, content, prefix):
        prefix -= 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == content[-1 - suffix]:
        suffix += 1
    while suffix and _inside_word(old, content, len(old) - suffix, len(content) - suffix):
        suffix -= 1
    return Edit(
        index.position(begin + prefix),
        index.position(finish - suffix),
        content[prefix : len(content) - suffix],
    )


def _inside_word(old: str, new: str, cut: int, new_cut: int | None = None) -> bool:
    """Whether cutting `old` at `cut` (and `new` at `new_cut`) would split an identifier or number."""
    new_cut = cut if new_cut is None else new_cut

    def word(text: str, at: int) -> bool:
        return 0 <= at < len(text) and (text[at].isalnum() or text[at] == "_")

    return word(old, cut - 1) and (word(old, cut) or word(new, new_cut))
