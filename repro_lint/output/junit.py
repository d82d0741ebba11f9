"""JUnit XML, which CI systems show as test results: one test suite, a test case per file linted,
and in it a failure per finding; a file repro-lint failed on has an error, one it skipped is
skipped. A file with no finding is a test that passed."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from repro_lint.core.findings import Finding
from repro_lint.output.context import ReportContext
from repro_lint.output.text import finding_line

SUITE = "repro-lint"
# Characters XML 1.0 cannot hold, escaped or not (a message may quote a source's form feed).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\N{REPLACEMENT CHARACTER}", text)


def _case(path: str) -> ET.Element:
    return ET.Element("testcase", name=_clean(path), classname=SUITE)


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    linted = context.texts.paths if context.texts is not None else []
    paths = sorted({*linted, *(finding.path for finding in findings), *(problem.path for problem in context.problems)})
    cases = {path: _case(path) for path in paths}
    for finding in findings:
        failure = ET.SubElement(cases[finding.path], "failure", message=_clean(f"{finding.code} {finding.message}"), type=finding.code)
        failure.text = _clean(finding_line(finding))
    for problem in context.problems:
        if problem.kind == "error":
            ET.SubElement(cases[problem.path], "error", message=_clean(problem.summary), type="internal-error").text = _clean(problem.traceback or problem.summary)
        else:
            ET.SubElement(cases[problem.path], "skipped", message=_clean(problem.summary))
    counts = {
        "tests": len(cases),
        "failures": sum(case.find("failure") is not None for case in cases.values()),
        "errors": sum(case.find("error") is not None for case in cases.values()),
        "skipped": sum(case.find("skipped") is not None for case in cases.values()),
    }
    attributes = {key: str(value) for key, value in counts.items()}
    suites = ET.Element("testsuites", name=SUITE, **{key: attributes[key] for key in ("tests", "failures", "errors")})
    suite = ET.SubElement(suites, "testsuite", name=SUITE, **attributes)
    suite.extend(cases.values())
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode")
