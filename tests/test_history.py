"""benchmarks/history.py: a repository's commits replayed, each cached run against an uncached one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HISTORY = Path(__file__).resolve().parent.parent / "benchmarks" / "history.py"
TRAIN = "import torch\n\n\ndef main():\n    torch.randn(2)\n\n\nif __name__ == '__main__':\n    main()\n"


def _commit(repo: Path, files: dict[str, str | None], message: str) -> None:
    for name, text in files.items():
        if text is None:
            (repo / name).unlink()
        else:
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message], cwd=repo, check=True)


def test_each_commit_is_replayed_and_the_record_answers_those_the_pass_cannot_see(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    _commit(repo, {"train.py": TRAIN, "README.md": "a\n"}, "first")
    _commit(repo, {"train.py": TRAIN.replace("    main()", "    main()  # run"), "README.md": "b\n"}, "a comment")
    _commit(repo, {"README.md": "c\n"}, "no Python: not replayed")
    _commit(repo, {"train.py": TRAIN.replace("def main():\n", "def main():\n    torch.manual_seed(0)\n")}, "seeds")
    result = subprocess.run([sys.executable, str(HISTORY), str(repo), "--commits", "5", "--jobs", "1"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [[cell.strip() for cell in line.split("|")[2:-1]] for line in result.stdout.splitlines()[2:]]
    # The first commit is the audited tree; the others changing Python are replayed, oldest first.
    assert rows == [["2", "1", "yes", "no"], ["1", "1", "yes", "yes"], ["", "", "2", "1 (answered from the record: 1)"]]
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout == ""


def test_only_the_commits_changing_the_files_asked_for_are_replayed_on_the_tree_as_it_was(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    _commit(repo, {"train.py": TRAIN}, "first")
    _commit(repo, {"tests/test_train.py": "import train\n\n\ndef test_main():\n    assert train.main\n"}, "a test added")
    _commit(repo, {"train.py": TRAIN.replace("def main():\n", "def main():\n    torch.manual_seed(0)\n")}, "seeds: applied, not replayed")
    _commit(repo, {"tests/test_train.py": "import train\n\n\nclass TestTrain:\n    def test_main(self):\n        assert train.main\n"}, "a test class")
    command = [sys.executable, str(HISTORY), str(repo), "--commits", "5", "--jobs", "1", "--only", "tests/*"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split("|")[1].strip() for line in result.stdout.splitlines()[2:-1]]
    tested = subprocess.run(["git", "log", "--format=%h", "-n", "3", "--", "tests"], cwd=repo, capture_output=True, text=True).stdout.split()
    assert [row[:7] for row in rows] == [commit[:7] for commit in tested[::-1]]
    # Each is answered from the record of an audit of the commit before it, the seed applied there.
    assert result.stdout.splitlines()[-1].endswith("| 0 (answered from the record: 2) |")
