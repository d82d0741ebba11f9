"""The audit's scorecard, one module per format: `text` (a terminal table), `markdown` (a
pull-request comment or a GitHub job summary), `html` (one self-contained page) and `json_report`;
`report` picks one; `context` is what they say besides the verdicts, and `totals` the closing line they share. Findings are written as
`check --output-format json` writes them."""

# Named here, not by the renderers: the command line offers them without loading one.
AUDIT_FORMATS = ("text", "markdown", "html", "json")
