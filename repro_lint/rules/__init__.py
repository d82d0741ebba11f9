"""The rules, one module per family. `repro_lint.registry` imports them all and holds the registry."""
