"""Score repro-lint against the blind-labelled corpus: per rule, true positives, misses and false
positives, recall and precision, before and after adjudication.

    python benchmarks/corpus.py CHECKOUTS [--labels benchmarks/corpus] [--jobs 2] [--details FILE]

`benchmarks/corpus/<owner+name>.json` holds one repository's labels: its pinned commit, and for each
labelled file every finding the catalog says belongs there (an empty list says nothing should fire).
The labels under `files` were written before repro-lint ran on the repository and stay as written:
the blind score is theirs. `adjudicated` records each later change, with the catalog's reason:
`{"file", "line", "code", "change": "add" | "remove", "reason"}` (and `"cell"` in notebooks).

The script fetches nothing: CHECKOUTS holds one folder per repository, named `<owner+name>`, at the
pinned commit (`git clone` then `git checkout COMMIT`). Every rule runs, default-on or not; REP001
and REP002 are about the run, not the code, and are not scored. Findings in files that carry no
label are not scored here (they are triaged by hand). A finding matches a label of its code in its
file (and cell) within LINE_TOLERANCE lines, the nearest first.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from repro_lint.api import lint_paths  # noqa: E402  (after the path is set)
from repro_lint.core.catalog import CATALOG  # noqa: E402
from repro_lint.core.settings import Settings  # noqa: E402

LINE_TOLERANCE = 2
NOT_SCORED = frozenset({"REP001", "REP002"})


@dataclass(frozen=True)
class Mark:
    """A finding or a label: where, and which rule."""

    file: str
    cell: int | None
    line: int
    code: str
    # The finding's message or the label's reason: shown in --details, not compared.
    text: str = field(default="", compare=False)


@dataclass
class Score:
    hits: Counter[str]
    misses: Counter[str]
    false_alarms: Counter[str]

    @classmethod
    def empty(cls) -> Score:
        return cls(Counter(), Counter(), Counter())

    def add(self, other: Score) -> None:
        self.hits += other.hits
        self.misses += other.misses
        self.false_alarms += other.false_alarms


def labels(entry: dict, adjudicated: bool) -> list[Mark]:
    """The repository's labels, blind or with the adjudications applied."""
    marks = [Mark(file, label.get("cell"), label["line"], label["code"], label["why"]) for file, found in entry["files"].items() for label in found]
    if adjudicated:
        for change in entry.get("adjudicated", []):
            mark = Mark(change["file"], change.get("cell"), change["line"], change["code"], change["reason"])
            if change["change"] == "add":
                marks.append(mark)
            elif change["change"] == "remove":
                marks.remove(mark)  # a ValueError names a removal of a label that is not there
            else:
                raise ValueError(f"unknown change {change['change']!r} in {entry['repository']}")
    return [mark for mark in marks if mark.code not in NOT_SCORED]


def match(found: Iterable[Mark], expected: Iterable[Mark]) -> tuple[list[tuple[Mark, Mark]], list[Mark], list[Mark]]:
    """Pairs (finding, label), labels missed, findings no label wants: nearest lines first."""
    found, expected = list(found), list(expected)
    candidates = sorted(
        (abs(finding.line - label.line), i, j)
        for i, finding in enumerate(found)
        for j, label in enumerate(expected)
        if (finding.file, finding.cell, finding.code) == (label.file, label.cell, label.code) and abs(finding.line - label.line) <= LINE_TOLERANCE
    )
    used_found: set[int] = set()
    used_expected: set[int] = set()
    pairs = []
    for _, i, j in candidates:
        if i not in used_found and j not in used_expected:
            used_found.add(i)
            used_expected.add(j)
            pairs.append((found[i], expected[j]))
    missed = [label for j, label in enumerate(expected) if j not in used_expected]
    unwanted = [finding for i, finding in enumerate(found) if i not in used_found]
    return pairs, missed, unwanted


def score(found: Iterable[Mark], expected: Iterable[Mark]) -> tuple[Score, list[Mark], list[Mark]]:
    pairs, missed, unwanted = match(found, expected)
    result = Score(Counter(label.code for _, label in pairs), Counter(label.code for label in missed), Counter(mark.code for mark in unwanted))
    return result, missed, unwanted


def findings(checkout: Path, labelled: set[str], jobs: int) -> list[Mark]:
    """repro-lint's findings in the labelled files of a checkout, every rule on."""
    here = Path.cwd()
    os.chdir(checkout)  # findings' paths are then relative to the repository's root
    try:
        result = lint_paths([Path(".")], Settings(select=("REP",)), jobs=jobs)
    finally:
        os.chdir(here)
    return [
        Mark(finding.path.removeprefix("./"), finding.cell, finding.start.line, finding.code, finding.message)
        for finding in result.findings
        if finding.path.removeprefix("./") in labelled and finding.code not in NOT_SCORED
    ]


def ratio(part: int, whole: int) -> str:
    return f"{part / whole:.2f}" if whole else "-"


def table(score: Score, codes: list[str]) -> Iterator[str]:
    yield f"{'rule':<8} {'default':<8} {'TP':>4} {'FN':>4} {'FP':>4} {'recall':>7} {'precision':>9}"
    for code in codes:
        hit, miss, alarm = score.hits[code], score.misses[code], score.false_alarms[code]
        default = ("on" if CATALOG[code].default_enabled else "off") if code in CATALOG else "new"  # new: not built yet
        yield f"{code:<8} {default:<8} {hit:>4} {miss:>4} {alarm:>4} {ratio(hit, hit + miss):>7} {ratio(hit, hit + alarm):>9}"
    default_on = [code for code in codes if code in CATALOG and CATALOG[code].default_enabled]
    # The bar is set per family of default-on rules (REP1xx seeds, REP2xx data order, ...).
    for family in sorted({code[:4] for code in default_on}):
        yield _sum_row(f"{family}xx", "on", score, [code for code in default_on if code.startswith(family)])
    yield _sum_row("total", "on", score, default_on)
    yield _sum_row("total", "all", score, list(codes))


def _sum_row(label: str, name: str, score: Score, keep: list[str]) -> str:
    hit, miss, alarm = (sum(counter[code] for code in keep) for counter in (score.hits, score.misses, score.false_alarms))
    return f"{label:<8} {name:<8} {hit:>4} {miss:>4} {alarm:>4} {ratio(hit, hit + miss):>7} {ratio(hit, hit + alarm):>9}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkouts", type=Path, help="folder holding one checkout per repository, named owner+name")
    parser.add_argument("--labels", type=Path, default=Path(__file__).resolve().parent / "corpus")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--details", type=Path, help="write every miss and false positive to this JSON file")
    args = parser.parse_args(argv)

    totals = {"blind": Score.empty(), "adjudicated": Score.empty()}
    details: list[dict[str, object]] = []
    entries = sorted(args.labels.glob("*.json"))
    if not entries:
        parser.error(f"no label files in {args.labels}")
    scored = 0
    for path in entries:
        entry = json.loads(path.read_text(encoding="utf-8"))
        checkout = args.checkouts / entry["repository"].replace("/", "+")
        if not checkout.is_dir():
            print(f"skipped {entry['repository']}: no checkout at {checkout}", file=sys.stderr)
            continue
        found = findings(checkout, set(entry["files"]), args.jobs)
        scored += 1
        for kind, total in totals.items():
            result, missed, unwanted = score(found, labels(entry, adjudicated=kind == "adjudicated"))
            total.add(result)
            if kind == "adjudicated":
                details += [{"repository": entry["repository"], "kind": "miss", **vars(mark)} for mark in missed]
                details += [{"repository": entry["repository"], "kind": "false positive", **vars(mark)} for mark in unwanted]
        print(f"{entry['repository']}: {len(entry['files'])} files, {len(found)} findings in them", file=sys.stderr)
    codes = sorted(set().union(*(set(counter) for total in totals.values() for counter in vars(total).values())))
    for kind, total in totals.items():
        print(f"\n{kind} labels ({scored} repositories)")
        print("\n".join(table(total, codes)))
    if args.details:
        args.details.write_text(json.dumps(details, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
