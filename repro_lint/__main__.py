from repro_lint.cli import main

main()
