"""Which verdicts changed between two sets of reproduction reports.

    python scripts/verdict_diff.py OLD_DIR NEW_DIR [PAPER ...]

Each DIR holds <paper>/results.json (e.g. docs/reproductions and a copy
taken with `git show REV:docs/reproductions/<paper>/results.json`). Rows are
matched by experiment and item text; prints, per paper, the rows whose
verdict changed, the rows only in NEW (added) and only in OLD (removed),
as Markdown."""

import json
import sys
from pathlib import Path


def rows(d: Path, paper: str) -> dict:
    f = d / paper / "results.json"
    if not f.is_file():
        return {}
    doc = json.loads(f.read_text(encoding="utf-8"))
    return {(s["experiment"], r["item"]): r for s in doc["sections"] for r in s["rows"]}


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    old_dir, new_dir = Path(argv[0]), Path(argv[1])
    papers = argv[2:] or ["ltcp", "htcp", "ehstcp", "tcpgt", "plt"]
    for p in papers:
        old, new = rows(old_dir, p), rows(new_dir, p)
        changed = [(k, old[k]["verdict"], new[k]["verdict"]) for k in new if k in old and old[k]["verdict"] != new[k]["verdict"]]
        added = [k for k in new if k not in old]
        removed = [k for k in old if k not in new]
        print(f"## {p}: {len(changed)} changed, {len(added)} added, {len(removed)} removed, {sum(1 for k in new if k in old) - len(changed)} unchanged\n")
        # Per experiment, the verdict counts before and after (rows are often reworded, so this is the summary that survives).
        exps = sorted({e for e, _ in old} | {e for e, _ in new})
        print("| experiment | old verdicts | new verdicts |\n|---|---|---|")
        for e in exps:
            def count(rows):
                c = {}
                for (x, _), r in rows.items():
                    if x == e:
                        c[r["verdict"]] = c.get(r["verdict"], 0) + 1
                return ", ".join(f"{n} {v}" for v, n in sorted(c.items(), key=lambda kv: -kv[1])) or "-"
            print(f"| {e} | {count(old)} | {count(new)} |")
        print()
        for (e, item), a, b in changed:
            print(f"- {e}: {item}: {a} -> **{b}**")
        if added:
            print("\nAdded:")
            for e, item in added:
                print(f"- {e}: {item}: {new[(e, item)]['verdict']}")
        if removed:
            print("\nRemoved:")
            for e, item in removed:
                print(f"- {e}: {item} (was {old[(e, item)]['verdict']})")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
