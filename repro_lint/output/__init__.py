"""Rendering a run's findings and problems for people (concise and full text, coloured on a
terminal) and for machines (JSON, JSON Lines, JUnit XML, GitLab Code Quality, pylint's lines, SARIF,
GitHub annotations), a module per format; `report` picks one and writes it.

May import the engine and everything below it (`core` for findings and pages); only the front-ends
import it."""
