"""The blind-labelled corpus's scorer (benchmarks/corpus.py) and its label files."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import corpus  # noqa: E402

LABELS = Path(corpus.__file__).parent / "corpus"


def mark(line: int, code: str = "REP301", file: str = "train.py", cell: int | None = None) -> corpus.Mark:
    return corpus.Mark(file, cell, line, code)


def test_a_finding_matches_the_nearest_label_of_its_code_within_the_tolerance():
    pairs, missed, unwanted = corpus.match([mark(10), mark(30)], [mark(12), mark(9), mark(30, "REP101")])
    assert pairs == [(mark(10), mark(9))]
    assert missed == [mark(12), mark(30, "REP101")]
    assert unwanted == [mark(30)]


def test_file_and_cell_must_agree():
    _, missed, unwanted = corpus.match([mark(3, cell=2), mark(3, file="a.py")], [mark(3, cell=1), mark(3)])
    assert (len(missed), len(unwanted)) == (2, 2)


def test_adjudications_change_the_adjudicated_labels_only():
    entry = {
        "repository": "o/n",
        "files": {"train.py": [{"line": 4, "code": "REP301", "why": ""}, {"line": 9, "code": "REP001", "why": ""}]},
        "adjudicated": [
            {"file": "train.py", "line": 4, "code": "REP301", "change": "remove", "reason": "r"},
            {"file": "train.py", "line": 7, "code": "REP101", "change": "add", "reason": "r"},
        ],
    }
    assert corpus.labels(entry, adjudicated=False) == [mark(4)]  # REP001 is not scored
    assert corpus.labels(entry, adjudicated=True) == [mark(7, "REP101")]
    entry["adjudicated"].append({"file": "train.py", "line": 5, "code": "REP301", "change": "remove", "reason": "r"})
    with pytest.raises(ValueError):
        corpus.labels(entry, adjudicated=True)


def test_scores_a_checkout_end_to_end(tmp_path, capsys):
    checkout = tmp_path / "checkouts" / "owner+name"
    checkout.mkdir(parents=True)
    (checkout / "train.py").write_text(
        "import torch\n\ntorch.backends.cudnn.benchmark = True\nmodel = torch.nn.Linear(2, 2)\n"
        "loss = model(torch.randn(3, 2)).sum()\nloss.backward()\n",
        encoding="utf-8",
    )
    (checkout / "unlabelled.py").write_text("import torch\ntorch.backends.cudnn.benchmark = True\n", encoding="utf-8")
    labels = tmp_path / "labels"
    labels.mkdir()
    entry = {
        "repository": "owner/name",
        "commit": "0" * 40,
        "files": {"train.py": [{"line": 3, "code": "REP301", "why": "benchmark on"}, {"line": 5, "code": "REP308", "why": "wrong"}]},
        "adjudicated": [{"file": "train.py", "line": 5, "code": "REP308", "change": "remove", "reason": "not an environment setting"}],
    }
    (labels / "owner+name.json").write_text(json.dumps(entry), encoding="utf-8")
    (labels / "other+repo.json").write_text(json.dumps({**entry, "repository": "other/repo"}), encoding="utf-8")
    details = tmp_path / "details.json"
    assert corpus.main([str(tmp_path / "checkouts"), "--labels", str(labels), "--jobs", "1", "--details", str(details)]) == 0
    out = capsys.readouterr().out
    assert "blind labels (1 repositories)" in out  # the label file without a checkout is not counted
    blind, adjudicated = out.split("adjudicated labels")
    assert re.search(r"^REP301 +on +1 +0 +0 +1\.00 +1\.00$", blind, re.MULTILINE)
    assert re.search(r"^REP308 +on +0 +1 +0 +0\.00 +- *$", blind, re.MULTILINE)
    assert not re.search(r"^REP308 .* 1 ", adjudicated, re.MULTILINE)
    # Per family of default-on rules: REP101 (a false positive) and REP301 (a hit) in theirs.
    assert re.search(r"^REP1xx +on +0 +0 +1 +- +0\.00$", adjudicated, re.MULTILINE)
    assert re.search(r"^REP3xx +on +1 +1 +0 +0\.50 +1\.00$", blind, re.MULTILINE)
    found = json.loads(details.read_text(encoding="utf-8"))
    # REP101 fires on train.py (torch randomness, never seeded) and no label wants it; the finding
    # in the unlabelled file is not scored.
    assert [(item["kind"], item["code"], item["file"]) for item in found] == [("false positive", "REP101", "train.py")]
    assert found[0]["text"].startswith("this program never seeds torch")  # the finding's message, for adjudication


@pytest.mark.parametrize("path", sorted(LABELS.glob("*.json")), ids=lambda path: path.stem)
def test_label_files_are_well_formed(path):
    entry = json.loads(path.read_text(encoding="utf-8"))
    assert path.stem == entry["repository"].replace("/", "+")
    assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"])
    assert entry["files"], "a repository with no labelled file scores nothing"
    for file, found in entry["files"].items():
        assert not file.startswith(("/", "./")) and "\\" not in file
        for label in found:
            # Codes of the catalog (rules-catalog.md), implemented or not yet: a label is what the code is.
            assert re.fullmatch(r"REP\d{3}", label["code"]) and label["line"] >= 1 and label["why"]
            assert ("cell" in label) == file.endswith(".ipynb")
    for change in entry.get("adjudicated", []):
        assert change["change"] in ("add", "remove") and change["reason"] and re.fullmatch(r"REP\d{3}", change["code"])
