"""One file's analysis: parse a Python module once, run every enabled local rule and the facts
collector in one traversal (`python`), and give back a picklable `FileAnalysis` (`result`) with its
findings, facts and `noqa` comments (`suppression`). `wrapping` re-wraps calls a fix lengthened.

May import `rules` and everything below them; the engine and the sources call it."""
