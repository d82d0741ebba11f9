"""Launch scripts (.sh) and YAML/JSON configs: REP305 and REP308 under the same codes, positions,
noqa comments, fixes and output formats as Python findings; REP001 when a file cannot be parsed."""

import json
import textwrap

import pytest
from click.testing import CliRunner

from repro_lint.analysis.result import FileAnalysis
from repro_lint.analysis.suppression import Suppressions
from repro_lint.api import fix_source, lint_paths, lint_source
from repro_lint.cli import main
from repro_lint.core.problems import Problem
from repro_lint.core.settings import Settings
from repro_lint.sources import scanner_for
from repro_lint.sources.shell import interpret
from repro_lint.sources.shell_syntax import parses

SELECT = Settings(select=("REP305", "REP308", "REP001"))


def lint_file(text: str, name: str = "launch.sh") -> list[tuple[str, int, int]]:
    """(code, line, column) of each finding; columns 0-based."""
    findings = lint_source(textwrap.dedent(text), name, SELECT)
    return [(finding.code, finding.start.line, finding.start.column) for finding in findings]


def assert_fix_file(before: str, after: str, name: str, rule: str) -> None:
    """The fix gives `after`; fixing again changes nothing; re-linting no longer raises `rule`."""
    before, after = textwrap.dedent(before), textwrap.dedent(after)
    settings = Settings(select=(rule,))
    assert rule in [finding.code for finding in lint_source(before, name, settings)]
    assert fix_source(before, name, settings, unsafe=False) == before  # the fix is unsafe
    fixed = fix_source(before, name, settings, unsafe=True)
    assert fixed == after
    assert fix_source(fixed, name, settings, unsafe=True) == fixed
    assert rule not in [finding.code for finding in lint_source(fixed, name, settings)]


# --- the parsed script ----------------------------------------------------------------------------


def command_words(script: str) -> list[list[tuple[str, str]]]:
    """Each command's words, with the source text at each word's origin."""
    return [[(word.text, script[word.origin : word.origin + len(word.text)]) for word in command.words] for command in interpret(script).commands if command.words]


def test_words_positions_continuations_and_comments():
    script = 'torchrun a.py \\\n    --x "a b" # don\'t\necho ${#ARR[@]} x#y\n'
    assert command_words(script) == [
        [("torchrun", "torchrun"), ("a.py", "a.py"), ("--x", "--x"), ("a", "a"), ("b", "b")],
        [("echo", "echo"), ("${#ARR[@]}", "${#ARR[@]}"), ("x#y", "x#y")],
    ]
    assert [script[start:end] for start, end in interpret(script).comments] == ["# don't"]


def test_continuations_inside_quotes_and_escapes():
    # Inside double quotes a backslash-newline is dropped; inside single quotes it stays text.
    words = command_words('OPTS="--a \\\n  --b" RAW=\'--c \\\n --d\'\npython train.py $OPTS $RAW --e=\\"x\\" \'${NOT}\'\n')
    assert [text for text, _ in words[0]] == ["python", "train.py", "--a", "--b", "--c", "\\", "--d", '--e="x"', "${NOT}"]
    assert words[0][2:4] == [("--a", "--a"), ("--b", "--b")]


def test_command_substitution_is_one_unknown_word_and_its_commands_run():
    script = interpret('OUT=$(python b.py "a b" | tail -1)\nRUN=$(torchrun pretrain_gpt.py --lr 1)\necho "$OUT" --x\n')
    assert [[word.text for word in command.words] for command in script.commands if command.words] == [
        ["python", "b.py", "a", "b"], ["tail", "-1"], ["torchrun", "pretrain_gpt.py", "--lr", "1"], ["echo", "$(python b.py \"a b\" | tail -1)", "--x"]
    ]
    assert not script.commands[-1].words[1].known


def test_arrays_over_lines_with_quotes_comments_and_appends():
    script = 'ARGS=(\n  --a "x y"  # why\n  --b\n)\nARGS+=(--c)\nARGS[9]=z\nKEEP=(--d)\npython t.py "${KEEP[@]}" ${KEEP[0]}\n'
    assert command_words(script)[-1] == [("python", "python"), ("t.py", "t.py"), ("--d", "--d"), ("--d", "--d")]
    values = {assignment.name: assignment.value for assignment in interpret(script).assignments}
    assert values["ARGS"] is None  # one element set: the array is no longer known
    assignments = interpret(script).assignments
    assert [word.text for word in assignments[1].value] == ["--a", "x", "y", "--b", "--c"]


def test_heredocs():
    # A quoted delimiter, `<<-` with tabs, and commands after the body are read as bash reads them.
    script = "cat <<'EOF' >x.yaml\ntorchrun pretrain_gpt.py --use-flash-attn\nEOF\ncat <<-END\n\tpython a.py\n\tEND\nsbatch <<EOF\n#SBATCH -N 1\ntorchrun pretrain_gpt.py --lr 1\nEOF\npython after.py\n"
    assert [words[0][0] for words in command_words(script)] == ["cat", "cat", "sbatch", "torchrun", "python"]
    assert lint_file(script) == [("REP308", 9, 0)]


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        # tree-sitter-bash runs a command on past the newline after several assignments or a
        # three-command pipeline (its issues 228 and 347): bash ends it there.
        ("A=1 B=2\ntorchrun pretrain_gpt.py --use-flash-attn\n", [("REP305", 2, 25), ("REP308", 2, 0)]),
        ("A=1 B=2 # c\nif true; then torchrun pretrain_gpt.py; fi\n", [("REP308", 2, 14)]),
        ("a | grep x | head -3\ntorchrun pretrain_gpt.py && echo\n", [("REP308", 2, 0)]),
        # A line continuation before the end of the file ends the command, as in bash.
        ("torchrun pretrain_gpt.py \\\n  --use-flash-attn \\\n", [("REP305", 2, 2), ("REP308", 1, 0)]),
        # One word it splits in two (`${ROOT}/$` and `NAME/x`) is one word again.
        ("D=pretrain_gpt.py\ntorchrun ${R}/$D --use-flash-attn\n", [("REP305", 2, 17), ("REP308", 2, 0)]),
        ("S=a\nB=./x/$S/$S/pretrain_gpt.py\ntorchrun $B\n", [("REP308", 3, 0)]),
        # Words after a redirection's target are still the command's.
        ("torchrun pretrain_gpt.py > log --use-flash-attn 2>&1 --lr 1\n", [("REP305", 1, 31), ("REP308", 1, 0)]),
    ],
)
def test_what_tree_sitter_bash_misreads_is_read_as_bash_reads_it(script, expected):
    assert sorted(lint_file(script)) == sorted(expected)


def test_a_syntax_error_is_reported_and_the_rest_is_still_read():
    # A placeholder left in a template: REP001 where it is, the launch further down still checked.
    script = "CKPT=<PATH> (e.g., /357m)\ntorchrun pretrain_gpt.py --use-flash-attn\n"
    findings = lint_source(script, "launch.sh", SELECT)
    assert [(finding.code, finding.start.line, finding.start.column) for finding in findings] == [("REP001", 1, 0), ("REP308", 2, 0), ("REP305", 2, 25)]
    assert findings[0].message == "cannot parse: unexpected `CKPT=<PATH>`"
    # Inside `${...}` bash finds errors only when it runs: not one to report.
    assert lint_file('V="${ARG:$LEN+1}"\ntorchrun pretrain_gpt.py --lr 1\n') == [("REP308", 2, 0)]
    # What a fixed script must pass.
    assert not parses('x "unclosed\n')
    assert parses("x 'closed'\n")


def test_offsets_in_a_script_that_is_not_ascii():
    assert lint_file("# é — ü\nARGS=(--lr 1 --note 'ñ')\ntorchrun train.py ${ARGS[@]} --use-flash-attn\n") == [("REP305", 3, 29)]


def test_heredoc_bodies_are_skipped_unless_they_are_scripts():
    script = "cat <<EOF > c.yaml\ntorchrun pretrain_gpt.py\nEOF\nsbatch <<EOF\ntorchrun pretrain_bert.py\nEOF\n"
    words = [word.text for command in interpret(script).commands for word in command.words]
    assert "pretrain_gpt.py" not in words
    assert "pretrain_bert.py" in words


# --- REP305 in launch scripts ---------------------------------------------------------------------


def test_shell_flag_in_multiline_command():
    assert lint_file(
        """\
        torchrun --nproc_per_node 8 pretrain_gpt.py \\
            --tensor-model-parallel-size 2 \\
            --use-flash-attn \\
            --deterministic-modes
        """
    ) == [("REP308", 1, 0), ("REP305", 3, 4)]


def test_shell_flag_in_array_with_comments():
    assert lint_file(
        """\
        MODEL_ARGS=(
            --num-layers 24  # depth
            # --attention-backend fused
            --attention-backend flash
        )
        python train.py "${MODEL_ARGS[@]}"
        """
    ) == [("REP305", 4, 4)]


def test_shell_flag_in_string_variable_and_script_variable():
    findings = lint_file(
        """\
        SCRIPT=examples/pretrain_gpt.py
        OPTIONS=" \\
            --micro-batch-size 1 \\
            --attention-backend=auto \\
        "
        torchrun $SCRIPT ${OPTIONS}
        """
    )
    assert findings == [("REP305", 4, 4), ("REP308", 6, 0)]


def test_shell_appended_options_and_hf_style_flags():
    assert lint_file(
        """\
        ARGS="--lr 1e-4"
        ARGS="$ARGS --attn_implementation flash_attention_2"
        accelerate launch run_clm.py $ARGS --use_flash_attn True
        """
    ) == [("REP305", 2, 12), ("REP305", 3, 35)]


def test_shell_bash_c_string_and_sbatch_heredoc():
    assert lint_file(
        """\
        ARGS=(--use-flash-attn)
        CMD="cd /work; python ${ROOT}/pretrain_gpt.py ${ARGS[@]}"
        sbatch <<EOF
        srun bash -c "${CMD}"
        EOF
        """
    ) == [("REP305", 1, 6), ("REP308", 4, 13)]


SHELL_SILENT = [
    # --deterministic-mode makes Megatron's flash attention deterministic.
    "torchrun pretrain_gpt.py --use-flash-attn --deterministic-mode\n",
    # Another backend, one that cannot be known, or flash overridden by a later value.
    "python train.py --attention-backend fused\n",
    "python train.py --attention-backend $BACKEND\n",
    "python train.py --attention-backend flash --attention-backend fused\n",
    "python train.py --use_flash_attn false\n",
    # Commented out.
    "python train.py \\\n    --lr 1\n# --use-flash-attn\n",
    "ARGS=(\n  --lr 1\n  # --use-flash-attn\n)\npython train.py ${ARGS[@]}\n",
    # Inference: the flash forward pass is deterministic.
    "torchrun ../../tools/run_text_generation_server.py --use-flash-attn --tensor-model-parallel-size 1\n",
    # Options the scanner cannot see may hold --deterministic-mode.
    'torchrun pretrain_gpt.py --use-flash-attn "$@"\n',
    "torchrun pretrain_gpt.py --use-flash-attn ${EXTRA_ARGS}\n",
    "if [ $DET ]; then EXTRA=--deterministic-mode; else EXTRA=; fi\ntorchrun pretrain_gpt.py --use-flash-attn $EXTRA\n",
    # Not a launch, or flags never passed to one.
    'echo "--use-flash-attn"\n',
    'if [ "$DRY_RUN" = true ]; then\n  echo "torchrun pretrain_gpt.py --use-flash-attn"\nfi\n',
    "FLASH_ARGS=(--use-flash-attn)\necho done\n",
    "cat <<EOF > run.sh\ntorchrun pretrain_gpt.py --use-flash-attn\nEOF\n",
    # A training script that is not Megatron's: no --deterministic-mode to ask for.
    "python train.py --lr 1e-3\n",
]


@pytest.mark.parametrize("script", SHELL_SILENT)
def test_shell_silent(script):
    assert lint_file(script) == []


# --- REP308 in launch scripts ---------------------------------------------------------------------


def test_shell_branches_keep_both_option_lists_and_forget_values():
    # Neither branch passes --deterministic-mode: the launch lacks it either way.
    options = "if [ $FREEZE ]; then EXTRA=--freeze-lm; else EXTRA=; fi\ntorchrun pretrain_gpt.py $EXTRA\n"
    assert lint_file(options) == [("REP308", 2, 0)]
    # A value set in a `case` branch is unknown, but it is still the value of `--save`.
    value = "CKPT=none\ncase $1 in\n  --ckpt) CKPT=$2;;\nesac\ntorchrun pretrain_gpt.py --save $CKPT\n"
    assert lint_file(value) == [("REP308", 5, 0)]
    appended = "ARGS=()\nif [ $MOCK ]; then\n  ARGS+=(--mock-data)\nelse\n  ARGS+=(--data-path $DATA)\nfi\ntorchrun pretrain_gpt.py ${ARGS[@]}\n"
    assert lint_file(appended) == [("REP308", 7, 0)]


def test_shell_nvte_through_variables_and_prefixes():
    assert lint_file(
        """\
        if [[ $DEBUG -eq 1 ]]; then
            NONDETERMINISTIC_ATTN=1
        else
            NONDETERMINISTIC_ATTN=1
        fi
        export NVTE_ALLOW_NONDETERMINISTIC_ALGO=${NONDETERMINISTIC_ATTN}
        NVTE_ALLOW_NONDETERMINISTIC_ALGO=1 python train.py
        """
    ) == [("REP308", 6, 7), ("REP308", 7, 0)]


@pytest.mark.parametrize(
    "script",
    [
        "export NVTE_ALLOW_NONDETERMINISTIC_ALGO=0\n",
        "export NVTE_ALLOW_NONDETERMINISTIC_ALGO=$1\n",
        "export NVTE_ALLOW_NONDETERMINISTIC_ALGO=${ALLOW}\n",
        "if [ $FAST ]; then A=1; else A=0; fi\nexport NVTE_ALLOW_NONDETERMINISTIC_ALGO=$A\n",
        # NVLS is excluded, or the script does not ask for determinism.
        "export NCCL_ALGO=^NVLS\ntorchrun pretrain_gpt.py --deterministic-mode\n",
        "export NCCL_ALGO=Ring,CollnetDirect\ntorchrun pretrain_gpt.py --deterministic-mode\n",
        "export NCCL_ALGO=NVLS\npython train.py\n",
    ],
)
def test_shell_environment_silent(script):
    assert lint_file(script) == []


def test_shell_nccl_algo_allowing_nvls_under_deterministic_mode():
    assert lint_file("export NCCL_ALGO=NVLSTree,Ring\ntorchrun pretrain_gpt.py --deterministic-mode\n") == [("REP308", 1, 7)]
    assert lint_file("export NCCL_ALGO=^Tree\ntorchrun pretrain_gpt.py --deterministic-mode\n") == [("REP308", 1, 7)]


def test_shell_fix_sets_nvte_to_zero():
    assert_fix_file(
        "A=1\nexport NVTE_ALLOW_NONDETERMINISTIC_ALGO=${A}  # TE\npython train.py\n",
        "A=1\nexport NVTE_ALLOW_NONDETERMINISTIC_ALGO=0  # TE\npython train.py\n",
        "launch.sh",
        "REP308",
    )


# --- noqa -----------------------------------------------------------------------------------------


def test_shell_noqa_on_the_flag_line_and_after_a_multiline_command():
    array = "ARGS=(\n  --use-flash-attn  # noqa: REP305\n)\npython train.py ${ARGS[@]}\n"
    assert lint_file(array) == []
    command = "torchrun pretrain_gpt.py \\\n    --use-flash-attn \\\n    --lr 1  # noqa: REP305, REP308\n"
    assert lint_file(command) == []
    other_code = "torchrun pretrain_gpt.py \\\n    --use-flash-attn \\\n    --lr 1  # noqa: REP308\n"
    assert lint_file(other_code) == [("REP305", 2, 4)]
    file_wide = "# repro-lint: noqa: REP305\ntorchrun train.py --use-flash-attn\n"
    assert lint_file(file_wide) == []


# --- YAML and JSON --------------------------------------------------------------------------------


def test_yaml_keys():
    assert lint_file(
        """\
        model:
          config:
            use_flash_attn: True
            flash_attention: yes
            attn_implementation: flash_attention_2
        trainer:
          attention_backend: flash
        """,
        "config.yaml",
    ) == [("REP305", 3, 4), ("REP305", 4, 4), ("REP305", 5, 4), ("REP305", 7, 2)]


YAML_SILENT = [
    "use_flash_attn: false\n",
    "use_flash_attn: ${oc.env:FLASH}\n",
    "use_flash_attn: 'true'\n",
    "attn_implementation: sdpa\n",
    "# use_flash_attn: true\nlr: 1\n",
    "note: 'use_flash_attn: true'\n",
    "use_flash_attn: true  # noqa: REP305\n",
    "attention_backend: flash\ndeterministic_mode: true\n",
    "env:\n  NVTE_ALLOW_NONDETERMINISTIC_ALGO: '0'\n",
    "env:\n  NVTE_ALLOW_NONDETERMINISTIC_ALGO: ${ALLOW}\n",
    "NCCL_ALGO: NVLS\n",
    "NCCL_ALGO: ^NVLS\ndeterministic_mode: true\n",
]


@pytest.mark.parametrize("config", YAML_SILENT)
def test_yaml_silent(config):
    assert lint_file(config, "config.yml") == []


def test_yaml_environment_forms():
    assert lint_file(
        """\
        env:
          - name: NVTE_ALLOW_NONDETERMINISTIC_ALGO
            value: "1"
          - NVTE_ALLOW_NONDETERMINISTIC_ALGO=1
        variables:
          NVTE_ALLOW_NONDETERMINISTIC_ALGO: 1
          NCCL_ALGO: NVLS
        deterministic_mode: true
        """,
        "job.yaml",
    ) == [("REP308", 2, 10), ("REP308", 4, 4), ("REP308", 6, 2), ("REP308", 7, 2)]


def test_yaml_fix_keeps_quotes_and_comments():
    assert_fix_file(
        'env:\n  - name: NVTE_ALLOW_NONDETERMINISTIC_ALGO\n    value: "1"  # speed\n  - NVTE_ALLOW_NONDETERMINISTIC_ALGO=2\n',
        'env:\n  - name: NVTE_ALLOW_NONDETERMINISTIC_ALGO\n    value: "0"  # speed\n  - NVTE_ALLOW_NONDETERMINISTIC_ALGO=0\n',
        "job.yaml",
        "REP308",
    )


def test_json_config():
    config = json.dumps({"model": {"use_flash_attn": True, "attn_implementation": "flash_attention_2"}}, indent=2)
    assert lint_file(config, "config.json") == [("REP305", 3, 4), ("REP305", 4, 4)]
    assert lint_file(config.replace("  ", "\t"), "config.json") == [("REP305", 3, 2), ("REP305", 4, 2)]
    assert lint_file(config.replace("true", "false").replace("flash_attention_2", "sdpa"), "config.json") == []


def test_json_fix():
    assert_fix_file(
        '{"env": {"NVTE_ALLOW_NONDETERMINISTIC_ALGO": "1"}}\n',
        '{"env": {"NVTE_ALLOW_NONDETERMINISTIC_ALGO": "0"}}\n',
        "config.json",
        "REP308",
    )


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("bad.yaml", "model:\n  use_flash_attn: [true\n", ("REP001", 3, 0)),
        ("bad.yaml", "model:\n  use_flash_attn: true\n bad: 1\n", ("REP001", 3, 1)),
        ("bad.json", '{"use_flash_attn": true,}\n', ("REP001", 1, 24)),
        ("bad.sh", 'torchrun pretrain_gpt.py --use-flash-attn "unclosed\n', ("REP001", 1, 42)),
    ],
)
def test_unparsable_files_give_rep001(name, text, expected):
    findings = lint_source(text, name, SELECT)
    assert [(finding.code, finding.start.line, finding.start.column) for finding in findings] == [expected]
    assert findings[0].message.startswith("cannot parse: ")


def test_unrelated_broken_configs_are_not_parsed():
    # Files that mention none of the settings are never parsed, so templates (Helm, Jinja) stay quiet.
    assert lint_file("{{- if .Values.x }}\nkey: {{ .Values.y }}\n", "chart.yaml") == []


# --- configs beyond the bounds: aliases, nesting, size ---------------------------------------------

FLASH = "use_flash_attn: true\n"


def scan(text: str, name: str) -> FileAnalysis:
    scanner = scanner_for(name)
    assert scanner is not None
    return scanner(text, name)


@pytest.mark.parametrize("anchored", ["a: &a [*a]\n", "a: &a {b: *a, c: [*a]}\n"])
def test_recursive_alias_is_scanned_once(anchored):
    analysis = scan(anchored + FLASH, "loop.yaml")
    assert [(finding.code, finding.start.line) for finding in analysis.findings] == [("REP305", 2)]
    assert analysis.problem is None


def test_billion_laughs_is_not_expanded():
    # Nine levels of ten aliases: 10**9 nodes if walked as a tree, a few dozen as the graph they are.
    levels = ["l0: &l0 [lol]", *(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * 10)}]" for level in range(1, 10))]
    analysis = scan("\n".join(levels) + "\nmodel: &m {" + FLASH.strip() + "}\nagain: *m\n", "laughs.yaml")
    assert [(finding.code, finding.start.line) for finding in analysis.findings] == [("REP305", 11)]
    assert analysis.problem is None


@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        ("deep.yaml", FLASH + "x: " + "[" * 1_000 + "]" * 1_000 + "\n", "nested more than 100 levels deep"),
        ("deep.yaml", FLASH + "x: " + "[" * 99 + "1" + "]" * 99 + "\n", "nested more than 100 levels deep"),  # 101 levels
        ("deep.json", '{"use_flash_attn": true, "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested more than 100 levels deep"),
        ("deep.json", '{"use_flash_attn": true, "x": ' + "[" * 500 + "]" * 500 + "}", "nested more than 100 levels deep"),
        ("wide.yaml", FLASH + "x: [" + "1, " * 100_000 + "]\n", "more than 100,000 nodes"),
        ("large.yaml", FLASH + "x: " + "y" * 2_000_000 + "\n", "larger than 2,000,000 characters"),
        ("large.json", '{"use_flash_attn": true, "x": "' + "y" * 2_000_000 + '"}', "larger than 2,000,000 characters"),
    ],
)
def test_configs_beyond_the_bounds_are_skipped_with_the_reason(name, text, reason):
    analysis = scan(text, name)
    assert analysis.findings == []
    assert analysis.problem == Problem(name, "skipped", reason)


def test_configs_within_the_bounds_are_scanned():
    nested = "x: " + "[" * 97 + "{" + FLASH.strip() + "}" + "]" * 97 + "\n"  # 100 levels
    analysis = scan(nested, "nested.yaml")
    assert [finding.code for finding in analysis.findings] == ["REP305"] and analysis.problem is None
    # A large file naming no setting the rules read has nothing to find: no reason to warn.
    assert scan("x: " + "y" * 2_000_000 + "\n", "data.yaml") == FileAnalysis("data.yaml", [], None, Suppressions())


def test_noqa_inside_a_scalar_is_no_comment():
    before = "".join(f"k{index}: 'v # {index}'\n" for index in range(3))
    inside = before + "m: {use_flash_attn: true, note: 'a # noqa: REP305'}\n"
    assert lint_file(inside, "m.yaml") == [("REP305", 4, 4)]
    assert lint_file(before + "m: {use_flash_attn: true, note: 'a'}  # noqa: REP305\n", "m.yaml") == []


# --- the engine: discovery, project files, output ------------------------------------------------


def test_every_scanned_suffix_has_a_scanner_and_a_validator():
    from repro_lint import sources
    from repro_lint.engine.discovery import LINTED_SUFFIXES, SCANNED_SUFFIXES

    assert set(SCANNED_SUFFIXES) <= set(LINTED_SUFFIXES)
    for suffix in SCANNED_SUFFIXES:
        assert sources.scanner_for(f"dir/file{suffix}") is not None
        assert sources.validator_for(f"dir/file{suffix}") is not None
    assert sources.scanner_for("dir/train.py") is None


def test_discovery_lints_scripts_and_configs_with_python(project):
    root = project({
        "train.py": "model = Model(use_flash_attn=True)\n",
        "scripts/run.sh": "python train.py \\\n    --use-flash-attn\n",
        "configs/model.yaml": "use_flash_attn: true\n",
        "configs/model.json": '{"use_flash_attn": true}\n',
        "notes.txt": "use_flash_attn: true\n",
    })
    findings = lint_paths([root], Settings(select=("REP305",))).findings
    assert sorted((f.path.rpartition(str(root))[2], f.start.line) for f in findings) == [
        ("/configs/model.json", 1),
        ("/configs/model.yaml", 1),
        ("/scripts/run.sh", 2),
        ("/train.py", 1),
    ]


def test_linting_one_python_file_does_not_read_configs(project, monkeypatch):
    root = project({"train.py": "import other\nx = 1\n", "other.py": "y = 2\n", "big.json": "{" * 10})
    from repro_lint.engine import engine

    calls = []
    original = engine.scanner_for

    def spy(path: str):
        calls.append(path)
        return original(path)

    monkeypatch.setattr(engine, "scanner_for", spy)
    assert lint_paths([root / "train.py"], Settings()).findings == []
    assert any(path.endswith("other.py") for path in calls)  # the modules its program needs are read
    assert not any(path.endswith(".json") for path in calls)


def test_linting_only_scripts_does_not_read_the_python_project(project, monkeypatch):
    # Pre-commit passes the changed files: a changed config needs no facts of the project's modules.
    root = project({"train.py": "x = 1\n", "run.sh": "python train.py --use-flash-attn\n"})
    parsed = []
    monkeypatch.setattr("repro_lint.analysis.python.analyze", lambda *args, **kwargs: parsed.append(args[1]))
    assert [f.code for f in lint_paths([root / "run.sh"], Settings(select=("REP305",))).findings] == ["REP305"]
    assert parsed == []


def test_cli_text_and_json_output_for_a_script(project, monkeypatch):
    root = project({"run.sh": "torchrun train.py --use-flash-attn\n"})
    monkeypatch.chdir(root)
    runner = CliRunner()
    text = runner.invoke(main, ["check", "run.sh", "--select", "REP305"])
    assert text.exit_code == 1
    assert text.output.splitlines()[0].startswith("run.sh:1:19: REP305 `--use-flash-attn` turns flash attention on")
    output = runner.invoke(main, ["check", "run.sh", "--select", "REP305", "--output-format", "json"])
    record = json.loads(output.output)[0]
    assert (record["code"], record["path"], record["line"], record["column"], record["end_column"]) == ("REP305", "run.sh", 1, 19, 35)


def test_cli_unsafe_fix_rewrites_a_config_file(project, monkeypatch):
    root = project({"job.yaml": "env:\n  NVTE_ALLOW_NONDETERMINISTIC_ALGO: '1'  # keep\n"})
    monkeypatch.chdir(root)
    runner = CliRunner()
    assert runner.invoke(main, ["check", "job.yaml", "--select", "REP308", "--fix"]).exit_code == 1  # unsafe: not applied
    assert "'1'" in (root / "job.yaml").read_text()
    result = runner.invoke(main, ["check", "job.yaml", "--select", "REP308", "--fix", "--unsafe-fixes"])
    assert result.exit_code == 0
    assert (root / "job.yaml").read_text() == "env:\n  NVTE_ALLOW_NONDETERMINISTIC_ALGO: '0'  # keep\n"
