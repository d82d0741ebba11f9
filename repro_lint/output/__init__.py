"""Rendering a run's findings and problems for people and for machines: text, JSON, SARIF and
GitHub annotations.

May import the engine and everything below it (`core` for findings and pages); only the front-ends
import it."""
