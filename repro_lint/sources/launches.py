"""Training launches in a shell script, and what REP305 and REP308 find in them.

A launch is a launcher word (`python`, `torchrun`, ...) followed by the script it runs (the next word
ending in `.py`) and that script's arguments, up to the end of the command or a `;` inside a
`bash -c` string. Flags are looked for in the arguments after expansion, so options held in arrays
and strings count, and are reported where they were written.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from repro_lint.core.message_text import elide
from repro_lint.knowledge import load
from repro_lint.sources.reports import Report
from repro_lint.sources.shell import Assignment, Script, Word

_WORD_PARTS = re.compile(r"[_\-.]+")


@dataclass(frozen=True)
class Launch:
    launcher: Word
    script: Word
    arguments: tuple[Word, ...]

    @property
    def script_name(self) -> str:
        return self.script.text.rstrip(";").rpartition("/")[2]


@cache
def _data() -> dict:
    return load("launch.json")


def _is_launcher(word: Word) -> bool:
    name = word.text.rpartition("/")[2]
    return word.known and (re.fullmatch(r"python[0-9.]*", name) is not None or name in _data()["launchers"])


def launches(script: Script) -> Iterator[Launch]:
    for command in script.commands:
        words = command.words
        if words and words[0].text.rpartition("/")[2] in _data()["quoting_commands"]:
            continue  # `echo "torchrun pretrain_gpt.py ..."` prints a command line, it runs nothing
        index = 0
        while index < len(words):
            if not _is_launcher(words[index]):
                index += 1
                continue
            found = _script(words, index + 1)
            if found is None:
                break
            script = words[found]
            if words[found - 1].text == "-m":  # `python -m package.pretrain_gpt`: named as its file
                script = Word(script.text.rpartition(".")[2] + ".py", script.origin, script.at, script.known)
            end = found + 1
            while end < len(words) and not words[end - 1].text.endswith(";") and words[end].text not in ("&&", "||", "|"):
                end += 1
            arguments = tuple(words[found + 1 : end])
            if words[found].text.endswith(";"):
                arguments = ()
            yield Launch(words[index], script, arguments)
            index = end


def _script(words: list[Word], start: int) -> int | None:
    """The index of the script a launcher runs: the first word ending in `.py`, or the module after
    `-m` unless that module is itself a launcher (`-m torch.distributed.run`)."""
    for at in range(start, len(words)):
        text = words[at].text.rstrip(";")
        if text.endswith(".py"):
            return at
        if words[at - 1].text == "-m" and words[at].known and text not in _data()["launcher_modules"]:
            return at
    return None


def _name_words(script_name: str) -> set[str]:
    return {part.lower() for part in _WORD_PARTS.split(script_name.removesuffix(".py")) if part}


def runs_inference(launch: Launch) -> bool:
    """The script's name says it only runs a model forward (generation, evaluation, export)."""
    return bool(_name_words(launch.script_name) & set(_data()["inference_words"]))


def _trains(launch: Launch) -> bool:
    return bool(_name_words(launch.script_name) & set(_data()["training_words"])) and not runs_inference(launch)


def _megatron_trainer(launch: Launch) -> bool:
    megatron = _data()["megatron"]
    named = any(fnmatch.fnmatch(launch.script_name, pattern) for pattern in megatron["scripts"])
    flagged = any(_flag_name(word) in megatron["marker_flags"] for word in launch.arguments)
    return (named or flagged) and _trains(launch)


def _flag_name(word: Word) -> str:
    return word.text.partition("=")[0] if word.text.startswith("-") else ""


def may_hold_options(words: tuple[Word, ...]) -> bool:
    """Whether an unknown word could be extra options: the script's own arguments (`"$@"`), a variable
    named like a list of options (`$EXTRA_ARGS`, `${OPTS}`), or any other expansion that does not
    follow an option, which would take it as its value (`--load $CHECKPOINT`)."""
    for index, word in enumerate(words):
        if word.known or not word.text.startswith(("$", "`")):
            continue
        name = word.text.strip("${}\"[]@*").upper()
        if not name or set(name.split("_")) & set(_data()["option_list_names"]):
            return True
        previous = words[index - 1].text if index else ""
        if not (previous.startswith("-") and "=" not in previous):
            return True
    return False


def deterministic_mode(launch: Launch) -> bool:
    return any(_flag_name(word) in _data()["deterministic_flags"] for word in launch.arguments)


def flash_flags(launch: Launch) -> list[tuple[Word, str]]:
    """The arguments that switch flash attention on, each with how it reads (`--attention-backend
    flash`): for each option, its last occurrence decides, as with argparse."""
    data = _data()
    chosen: dict[str, tuple[Word, str, bool | None]] = {}
    arguments = launch.arguments
    for index, word in enumerate(arguments):
        spec = next((spec for spec in data["flash_flags"] if spec["flag"] == _flag_name(word)), None)
        if spec is None:
            continue
        if "=" in word.text:
            value: Word | None = Word(word.text.partition("=")[2], word.origin, word.at, word.known)
            shown = word.text
        else:
            following = arguments[index + 1] if index + 1 < len(arguments) else None
            value = following if following is not None and not following.text.startswith("--") else None
            shown = f"{word.text} {value.text}" if value is not None and "values" in spec else word.text
        chosen[spec["flag"]] = (word, shown, _switches_on(spec, value))
    return sorted(((word, shown) for word, shown, on in chosen.values() if on), key=lambda item: item[0].origin)


def _switches_on(spec: dict, value: Word | None) -> bool | None:
    """True / False, or None when the value cannot be known."""
    data = _data()
    if "values" in spec:
        if value is None or not value.known or value.alternative:
            return None
        return value.text.lower() in spec["values"]
    if value is None:
        return True
    if not value.known or value.alternative:
        return None
    lowered = value.text.lower()
    if lowered in data["false_values"]:
        return False
    return True


def check_launch(launch: Launch) -> Iterator[Report]:
    if runs_inference(launch) or deterministic_mode(launch) or may_hold_options(launch.arguments):
        return
    for flag, shown in flash_flags(launch):
        yield Report(
            "REP305",
            flag.origin,
            len(flag.text),
            f"`{elide(shown)}` turns flash attention on for `{elide(launch.script_name)}`; its backward pass is nondeterministic",
        )
    if _megatron_trainer(launch):
        yield Report(
            "REP308",
            launch.launcher.at,
            len(launch.launcher.text),
            f"`{elide(launch.script_name)}` (a Megatron trainer) runs without `--deterministic-mode`: kernels may differ between runs",
        )


def check_environment(assignment: Assignment, claims_determinism: bool) -> Iterator[Report]:
    """NVTE_ALLOW_NONDETERMINISTIC_ALGO set to anything but 0, or NCCL_ALGO allowing NVLS in a script
    that asks for determinism."""
    environment = _data()["environment"]
    value = assignment.value
    if value is None or not value or not all(word.known and not word.alternative for word in value):
        return
    text = " ".join(word.text for word in value)
    algo = environment["nondeterministic_algo"]
    if assignment.name == algo["variable"] and text not in algo["deterministic_values"]:
        yield Report(
            "REP308",
            assignment.start,
            len(assignment.name),
            f"`{assignment.name}={elide(text)}` lets Transformer Engine pick nondeterministic attention kernels",
            (assignment.value_start, assignment.value_end, "0", f"Set `{assignment.name}=0`"),
        )
    nccl = environment["nccl_algo"]
    if assignment.name == nccl["variable"] and claims_determinism and allows_nvls(text, nccl["nvls_algorithms"]):
        yield Report(
            "REP308",
            assignment.start,
            len(assignment.name),
            f"`{assignment.name}={elide(text)}` lets NCCL use NVLS, whose reductions are not bitwise reproducible",
        )


def allows_nvls(value: str, nvls: list[str]) -> bool:
    """NCCL_ALGO is a comma-separated list of algorithms to use, or, after `^`, to exclude; `nvls`
    lists the NVLS algorithms, NVLS itself first."""
    algorithms = {part.strip().lower() for part in value.lstrip("^").split(",") if part.strip()}
    if value.startswith("^"):
        return nvls[0] not in algorithms  # excluding NVLS itself is what Megatron accepts
    return any(algorithm in algorithms for algorithm in nvls)
