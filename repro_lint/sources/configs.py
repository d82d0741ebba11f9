"""Scanning YAML and JSON configs: REP305 keys that switch flash attention on, REP308 environment
settings. Parsed with PyYAML's composer, which keeps every node's position; JSON goes through the
same composer (JSON is YAML's flow style), after the standard `json` module has checked it, so a
broken JSON file is reported in JSON's own words. A config too large or too deeply nested to compose
within bounds is skipped, and the analysis says so."""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import yaml

from repro_lint.analysis.result import FileAnalysis, syntax_error
from repro_lint.analysis.suppression import Suppressions
from repro_lint.core.message_text import elide
from repro_lint.core.source import LineIndex
from repro_lint.knowledge import load
from repro_lint.sources.launches import allows_nvls
from repro_lint.sources.reports import Report, analysis, empty, skipped

# Bigger files are data (datasets, vocabularies), not configuration; composing them would be slow.
MAX_CONFIG_CHARACTERS = 2_000_000
# PyYAML builds a node per event (100,000 take about 2 s and 70 MB) and recurses three calls per level
# of nesting. The largest config holding a key the rules read, across 29 training repositories, has
# 4,374 nodes nested 11 deep (a peft benchmark result).
MAX_CONFIG_NODES = 100_000
MAX_CONFIG_DEPTH = 100
_TOO_DEEP = f"nested more than {MAX_CONFIG_DEPTH} levels deep"
_TRUE = frozenset({"true", "yes", "on"})
_COMMENT = re.compile(r"(?:^|(?<=[ \t]))#[^\n]*", re.MULTILINE)


@dataclass(frozen=True)
class _Keys:
    flags: frozenset[str]
    implementation_keys: frozenset[str]
    implementations: frozenset[str]
    backend_keys: frozenset[str]
    backends: frozenset[str]
    deterministic: frozenset[str]
    algo_variable: str
    algo_deterministic: frozenset[str]
    nccl_variable: str
    nvls: list[str]

    @property
    def required(self) -> tuple[str, ...]:
        return (*self.flags, *self.implementation_keys, *self.backend_keys, self.algo_variable, self.nccl_variable)


@cache
def _keys() -> _Keys:
    data = load("launch.json")
    keys = data["config_keys"]
    environment = data["environment"]
    return _Keys(
        flags=frozenset(keys["flags"]),
        implementation_keys=frozenset(keys["implementations"]["keys"]),
        implementations=frozenset(keys["implementations"]["values"]),
        backend_keys=frozenset(keys["backends"]["keys"]),
        backends=frozenset(keys["backends"]["values"]),
        deterministic=frozenset(keys["deterministic"]),
        algo_variable=environment["nondeterministic_algo"]["variable"],
        algo_deterministic=frozenset(environment["nondeterministic_algo"]["deterministic_values"]),
        nccl_variable=environment["nccl_algo"]["variable"],
        nvls=environment["nccl_algo"]["nvls_algorithms"],
    )


class _Refused(Exception):
    """A config beyond the bounds above: the message says which."""


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe composer, counting the nodes it composes and the levels it is inside."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._nodes = 0
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node:
        self._nodes += 1
        if self._nodes > MAX_CONFIG_NODES:
            raise _Refused(f"more than {MAX_CONFIG_NODES:,} nodes")
        if self._depth == MAX_CONFIG_DEPTH:
            raise _Refused(_TOO_DEEP)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def scan_yaml(text: str, display: str) -> FileAnalysis:
    return _scan(text, display, is_json=False)


def scan_json(text: str, display: str) -> FileAnalysis:
    return _scan(text, display, is_json=True)


def _scan(text: str, display: str, is_json: bool) -> FileAnalysis:
    if not any(key in text for key in _keys().required):
        return empty(display)  # nothing the rules read: nothing to find, whatever its size
    if len(text) > MAX_CONFIG_CHARACTERS:
        return skipped(display, f"larger than {MAX_CONFIG_CHARACTERS:,} characters")
    if is_json:
        try:
            json.loads(text)
        except json.JSONDecodeError as error:
            return syntax_error(display, f"cannot parse: {error.msg}", error.lineno, error.colno - 1)
        except RecursionError:  # the decoder recurses per level, far deeper than MAX_CONFIG_DEPTH
            return skipped(display, _TOO_DEEP)
    try:
        documents = _compose(text, is_json)
    except yaml.YAMLError as error:
        message, offset = _yaml_problem(error)
        at = LineIndex(text).position(offset)
        return syntax_error(display, f"cannot parse: {message}", at.line, at.column)
    except _Refused as refused:
        return skipped(display, str(refused))
    reports: list[Report] = []
    scalars: list[tuple[int, int]] = []
    for document in documents:
        if document is None:
            continue
        nodes = _nodes(document)
        scalars.extend((node.start_mark.index, node.end_mark.index) for node in nodes if isinstance(node, yaml.ScalarNode))
        reports.extend(_check(nodes, text))
    return analysis(display, text, sorted(reports, key=lambda report: (report.offset, report.code)), _suppressions(text, scalars))


def _compose(text: str, is_json: bool) -> list[yaml.Node | None]:
    # A tab outside a JSON string is only whitespace (inside one JSON requires `\t`), but YAML refuses
    # tabs as indentation; a space in its place keeps every offset.
    source = text.replace("\t", " ") if is_json else text
    return list(yaml.compose_all(source, Loader=_BoundedLoader))


def _yaml_problem(error: yaml.YAMLError) -> tuple[str, int]:
    if isinstance(error, yaml.MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        message = error.problem or error.context or "invalid YAML"
        return message, mark.index if mark is not None else 0
    if isinstance(error, yaml.reader.ReaderError):
        return error.reason, error.position
    return str(error), 0


def parses_yaml(text: str) -> bool:
    try:
        _compose(text, is_json=False)
    except yaml.YAMLError:
        return False
    return True


def parses_json(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def _nodes(document: yaml.Node) -> list[yaml.Node]:
    """Every node of a document once, in document order. An alias is the node its anchor names, so
    the composed document is a graph: walked as a tree, `a: &a [*a]` never ends and nine levels of
    ten aliases each ("billion laughs") make a billion visits."""
    seen: set[int] = set()
    found: list[yaml.Node] = []
    pending = [document]
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        found.append(node)
        if isinstance(node, yaml.MappingNode):
            pending.extend(child for pair in reversed(node.value) for child in reversed(pair))
        elif isinstance(node, yaml.SequenceNode):
            pending.extend(reversed(node.value))
    return found


def _scalar(node: yaml.Node) -> str | None:
    return node.value if isinstance(node, yaml.ScalarNode) else None


def _is_true(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag.endswith(":bool") and node.value.lower() in _TRUE


def _pairs(nodes: list[yaml.Node]) -> Iterator[tuple[yaml.ScalarNode, yaml.Node]]:
    """Every `key: value` of a document, and every `{name: X, value: Y}` entry of an environment list
    (Kubernetes, Slurm and CI configs write variables that way)."""
    for node in nodes:
        if not isinstance(node, yaml.MappingNode):
            continue
        entries = {_scalar(key): (key, value) for key, value in node.value if _scalar(key) is not None}
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                yield key, value
        if "name" in entries and "value" in entries and isinstance(entries["name"][1], yaml.ScalarNode):
            yield entries["name"][1], entries["value"][1]


def _check(nodes: list[yaml.Node], text: str) -> Iterator[Report]:
    keys = _keys()
    pairs = list(_pairs(nodes))
    deterministic = any(key.value in keys.deterministic and _is_true(value) for key, value in pairs)
    for key, value in pairs:
        name, setting = key.value, _scalar(value)
        where = (key.start_mark.index, len(name))
        if name in keys.flags and _is_true(value):
            yield Report("REP305", *where, f"`{name}: {elide(setting)}` turns flash attention on; its backward pass is nondeterministic")
        elif setting is not None and (
            (name in keys.implementation_keys and setting in keys.implementations)
            or (name in keys.backend_keys and setting in keys.backends and not deterministic)
        ):
            yield Report("REP305", *where, f"`{name}: {elide(setting)}` chooses flash attention, whose backward pass is nondeterministic")
        elif name == keys.algo_variable and setting is not None and not _templated(setting) and setting not in keys.algo_deterministic:
            replacement = f"{value.style}0{value.style}" if value.style in ("'", '"') else "0"
            yield Report("REP308", *where, f"`{name}: {elide(setting)}` lets Transformer Engine pick nondeterministic attention kernels",
                         (value.start_mark.index, value.end_mark.index, replacement, f"Set `{name}` to 0"))
        elif name == keys.nccl_variable and setting is not None and deterministic and not _templated(setting) and allows_nvls(setting, keys.nvls):
            yield Report("REP308", *where, f"`{name}: {elide(setting)}` lets NCCL use NVLS, whose reductions are not bitwise reproducible")
    yield from _environment_strings(nodes, text)


def _environment_strings(nodes: list[yaml.Node], text: str) -> Iterator[Report]:
    """`- NVTE_ALLOW_NONDETERMINISTIC_ALGO=1` items of an environment list (docker-compose style)."""
    keys = _keys()
    prefix = keys.algo_variable + "="
    for node in nodes:
        if not isinstance(node, yaml.SequenceNode):
            continue
        for item in node.value:
            setting = _scalar(item)
            if setting is None or not setting.startswith(prefix):
                continue
            value = setting[len(prefix):]
            source = text[item.start_mark.index : item.end_mark.index]
            at = source.find(prefix)
            if _templated(value) or value in keys.algo_deterministic or at < 0 or "\n" in source:
                continue
            start = item.start_mark.index + at
            value_start = start + len(prefix)
            value_end = value_start + len(value)
            yield Report("REP308", start, len(keys.algo_variable), f"`{elide(setting, 48)}` lets Transformer Engine pick "
                         "nondeterministic attention kernels",
                         (value_start, value_end, "0", f"Set `{keys.algo_variable}=0`"))


def _templated(value: str) -> bool:
    """A value filled in later (`${oc.env:X}`, `{{ var }}`, `$X`): not known here."""
    return "$" in value or "{{" in value


def _suppressions(text: str, scalars: list[tuple[int, int]]) -> Suppressions:
    """`# noqa` comments: a `#` after a blank or at a line's start, outside every scalar."""
    suppressions = Suppressions()
    if "noqa" not in text.lower():
        return suppressions
    index = LineIndex(text)
    scalars = sorted(scalars)  # each node once: the spans do not overlap
    begins = [begin for begin, _ in scalars]
    for match in _COMMENT.finditer(text):
        start = match.start()
        inside = bisect_right(begins, start) - 1
        if inside >= 0 and start < scalars[inside][1]:
            continue
        at = index.position(start)
        own_line = not index.line_text(at.line)[: at.column].strip()
        suppressions.add_comment(at.line, at.column, match.group(), own_line)
    return suppressions
