from repro_lint.cli import run

run()
