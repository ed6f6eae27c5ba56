"""Writes the results tables of docs/conformance.md: every script of the
shipped suite run on each profile (tests/test_conformance.py holds the
committed tables equal to a fresh run).

    PYTHONPATH=python .venv/bin/python scripts/conformance_table.py
"""

from __future__ import annotations

from pathlib import Path

from longfat import conformance

DOC = Path(__file__).resolve().parents[1] / "docs" / "conformance.md"
BEGIN, END = "<!-- results: scripts/conformance_table.py -->\n", "<!-- end of results -->\n"


def main() -> None:
    suite = conformance.shipped_dir()
    paths = conformance.collect([str(suite)])
    results = {p: {str(s.relative_to(suite)): conformance.run_script(s, p) for s in paths} for p in conformance.PROFILES}
    text = DOC.read_text()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    DOC.write_text(head + BEGIN + conformance.markdown_table(suite, results) + END + tail)
    for p in conformance.PROFILES:
        print(f"{p}: {conformance.summary(list(results[p].values()))}")


if __name__ == "__main__":
    main()
