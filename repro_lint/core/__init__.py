"""The plain data every layer shares: positions and source reading (`source`), findings, fixes and
edits (`findings`), the rule catalog as data (`catalog`), the run's settings and rule selection
(`settings`), what kept a file from being analysed (`problems`), rule pages (`pages`), message
quoting (`message_text`), a memoised graph walk (`stack_memo`), a graph's closure (`graphs`)
and relative imports' module names (`imports`).

May import nothing of repro-lint, and nothing heavy: a run answered from the cache loads these
modules, never LibCST."""
