#!/usr/bin/env python3
"""Regenerates the parameter tables of docs/algorithms.md from the catalogue
the controllers declare in crates/longfat-cc (the blocks between
``<!-- catalogue NAME ... -->`` markers; the prose around them is kept).
tests/test_catalogue.py fails while the committed tables differ.

    PYTHONPATH=python python scripts/algorithm_tables.py
"""

from pathlib import Path

from longfat.catalogue import with_generated_blocks

DOCS = Path(__file__).resolve().parent.parent / "docs" / "algorithms.md"

if __name__ == "__main__":
    text = DOCS.read_text()
    new = with_generated_blocks(text)
    if new != text:
        DOCS.write_text(new)
    print(f"{DOCS}: {'regenerated' if new != text else 'up to date'}")
