"""Writing a paper's reproduction report: Markdown, a self-contained HTML page
(figures embedded) and results.json (every row with its check, for tests)."""

from __future__ import annotations

import base64
import html
import json
import os
import platform
import subprocess
from pathlib import Path

from longfat.reproduce.core import Section, deciding, describe
from longfat.reproduce.coverage import Cover, table_rows
from longfat.reproduce.criteria import AGREES, CONTROL_DIFFERS, CONTROL_PASSES, CONTROL_UNCLEAR, DIFFERS, NO_NUMBER, NOT_EVIDENCE, NOT_SEPARABLE


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kib / 2**20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{os.cpu_count()} cores ({cpu}){mem}, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def git_commit() -> str:
    """The commit of the clone longfat runs from; "unknown" for an installed
    package (whatever repository its environment happens to sit in)."""
    here = Path(__file__).resolve()
    root = here.parents[3]
    if here != root / "python" / "longfat" / "reproduce" / "report.py" or not (root / "crates").is_dir():
        return "unknown"
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5)
        commit = out.stdout.strip()
        if not commit:
            return "unknown"
        # Numbers from a tree whose simulator or analysis differs from the commit say so.
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--", "crates", "python"],
                               capture_output=True, text=True, timeout=5)
        return commit + (" with uncommitted changes to crates/ or python/" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _counts(sections: list[Section], scope: str = "claim") -> dict[str, int]:
    return verdict_counts([{"verdict": r.verdict, "check": r.check} for s in sections for r in s.rows], scope)


def verdict_counts(rows: list[dict], scope: str = "claim") -> dict[str, int]:
    """The verdict counts of the rows of one scope (criteria.SCOPES: a
    paper's claims by default; consistency checks and checks beyond the
    paper are counted apart), from Row-like dicts or results.json rows."""
    c = {AGREES: 0, DIFFERS: 0, NOT_SEPARABLE: 0, NO_NUMBER: 0, NOT_EVIDENCE: 0,
         CONTROL_DIFFERS: 0, CONTROL_PASSES: 0, CONTROL_UNCLEAR: 0}
    for r in rows:
        if ((r.get("check") or {}).get("scope") or "claim") == scope:
            c[r["verdict"]] = c.get(r["verdict"], 0) + 1
    return c


def decided(c: dict[str, int]) -> tuple[int, int]:
    """(decided, all) claim rows: a row is decided when it agrees, differs,
    or agrees but is not evidence (its control says the check cannot tell);
    "not separable" is undecided; "not compared" rows (the paper gives no
    number) are left out of both."""
    d = c[AGREES] + c[DIFFERS] + c[NOT_EVIDENCE]
    return d, d + c[NOT_SEPARABLE]


def _later(meta: dict) -> str:
    n = meta.get("later_looks")
    return f" ({n} of them at later looks of the sequential seeds)" if n else ""


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


VERDICT_MARK = {AGREES: "agrees", DIFFERS: "**differs**", NOT_SEPARABLE: "*not separable*", NO_NUMBER: "not compared",
                NOT_EVIDENCE: "**not evidence**", CONTROL_DIFFERS: "control differs", CONTROL_PASSES: "**control passes too**",
                CONTROL_UNCLEAR: "*control not separable*"}


def _verdict_line(c: dict[str, int], others: dict[str, dict[str, int]] | None = None) -> str:
    """The claims' verdict counts, then the negative controls', then the
    rows counted apart (consistency checks, checks beyond the paper)."""
    line = f"{c[AGREES]} agree, {c[DIFFERS]} differ, {c[NOT_SEPARABLE]} not separable, {c[NO_NUMBER]} not compared"
    if c[NOT_EVIDENCE]:
        line += f", {c[NOT_EVIDENCE]} not evidence (their negative control passes the same check, or is unclear)"
    d, n = decided(c)
    if n:
        line += f"; decided: {d} of {n} ({100 * d / n:.0f} %)"
    n_ctl = c[CONTROL_DIFFERS] + c[CONTROL_PASSES] + c[CONTROL_UNCLEAR]
    if n_ctl:
        line += f"; negative controls: {c[CONTROL_DIFFERS]} of {n_ctl} differ as the paper says they should"
    for scope, words in (("consistency", "consistency checks (not counted as claims)"), ("beyond", "checks beyond the paper (not counted)"),
                         ("sensitivity", "sensitivity rows (other readings of the paper, counted apart)")):
        o = (others or {}).get(scope)
        if o and sum(o.values()):
            line += f"; {words}: {o[AGREES]} agree, {o[DIFFERS]} differ, {o[NOT_SEPARABLE]} not separable"
    return line


def _other_counts(sections: list[Section]) -> dict[str, dict[str, int]]:
    return {scope: _counts(sections, scope) for scope in ("consistency", "beyond", "sensitivity")}


def claim_rows(sections: list[Section]) -> list[tuple[Section, object]]:
    """The rows a report opens with: every claim of the paper (scope claim,
    not a negative control), with its section, in report order."""
    return [(s, r) for s in sections for r in s.rows
            if ((r.check or {}).get("scope") or "claim") == "claim" and (r.check or {}).get("role") != "control"]


#: What results.json's meta says of a report's layout: it opens with the claims
#: (claim_rows) and folds the method text (the browser test reads it).
LAYOUT = "claims first"

_READING = ("Each row gives what the paper reported, what longfat measured ({spread}) and a verdict computed from the measured "
            "value under the stated criterion. Where a row differs, the note gives the likely reason.")


def write_markdown(path: Path, meta: dict, sections: list[Section]) -> None:
    c = _counts(sections)
    lines = [
        f"# Reproduction: {meta['title']}",
        "",
        *([f"**{meta['authors']}**", ""] if meta.get("authors") else []),
        f"*{meta['citation']}*",
        "",
        f"- Mode: **{meta['mode']}**" + (" (scaled down for smoke tests: not a reproduction)" if meta["mode"] == "quick" else ""),
        f"- Command: `{meta['command']}`",
        f"- Runs: {meta['runs']} simulations{_later(meta)}, about {meta['wall_s'] / 60:.1f} min of wall time (this paper's share of the simulated packets)"
        f" ({meta['total_wall_s'] / 60:.1f} min for the whole command, {meta.get('executor') or str(meta['jobs']) + ' parallel jobs'})",
        f"- Machine: {meta['machine']}",
        f"- longfat commit: {meta['commit']}",
        f"- Verdicts: {_verdict_line(c, _other_counts(sections))}",
        "",
        "## The paper's claims at a glance",
        "",
        "Every claim row of the report, in order (negative controls, consistency checks, sensitivity rows and checks beyond "
        "the paper are in the sections below).",
        "",
        "| figure | claim | verdict | seeds |",
        "|---|---|---|---|",
        *[f"| {_cell(s.title.split(':')[0])} | {_cell(r.item)} | {VERDICT_MARK.get(r.verdict, r.verdict)} | {seeds_of(r.check)} |"
          for s, r in claim_rows(sections)],
        "",
        *_coverage_markdown(meta),
        "<details><summary>How the rows are measured and judged</summary>",
        "",
        _READING.format(spread=meta.get("spread", "mean ± sample standard deviation over seeds where there are several")),
        "",
        *([meta["notes"], ""] if meta.get("notes") else []),
        "</details>",
        "",
    ]
    for s in sections:
        lines += [f"## {s.title}", ""]
        for fig in s.figures:
            lines += [f"![{s.title}]({fig})", ""]
        lines += ["<details><summary>Setup, choices and deviations</summary>", "", s.setup, ""]
        if s.deviations:
            lines += [f"*Choices and deviations:* {s.deviations}", ""]
        lines += ["</details>", ""]
        lines += ["| what | paper | longfat | seeds | verdict | criterion | note |", "|---|---|---|---|---|---|---|"]
        for r in s.rows:
            note = _note(r)
            lines.append(
                f"| {_cell(r.item)} | {_cell(r.paper)} | {_cell(r.measured)} | {seeds_of(r.check)} | {VERDICT_MARK.get(r.verdict, r.verdict)} | {_cell(r.check and _criterion(r))} | {_cell(note)} |"
            )
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


_COVERAGE_WORDS = ("What of the paper this report reproduces, figure by figure and table by table: full (every panel and "
                   "quantity run and judged at the paper's settings), partly (what is missing is said), not, or n-a (nothing to "
                   "simulate). Score: full 1, partly 1/2, not 0, over the figures with something to reproduce.")


def _coverage_markdown(meta: dict) -> list[str]:
    if "coverage" not in meta:
        return []
    return [
        f"## Coverage of the paper: {meta['coverage_score']:.2f}",
        "",
        _COVERAGE_WORDS,
        "",
        "| figure | coverage | experiments | what is missing, or why |",
        "|---|---|---|---|",
        *[f"| {f} | {st} | {_cell(ex)} | {_cell(why)} |" for f, st, ex, why in table_rows(_covers(meta))],
        "",
    ]


def _coverage_html(meta: dict) -> list[str]:
    if "coverage" not in meta:
        return []
    e = html.escape
    return [
        f"<h2>Coverage of the paper: {meta['coverage_score']:.2f}</h2><p>{e(_COVERAGE_WORDS)}</p>",
        "<table><tr><th>figure</th><th>coverage</th><th>experiments</th><th>what is missing, or why</th></tr>",
        *[f"<tr><td>{e(f)}</td><td>{e(st)}</td><td>{e(ex)}</td><td>{e(why)}</td></tr>" for f, st, ex, why in table_rows(_covers(meta))],
        "</table>",
    ]


def _covers(meta: dict) -> dict[str, Cover]:
    return {c["figure"]: Cover(c["status"], tuple(c["experiments"]), c["why"]) for c in meta["coverage"]}


def seeds_of(check: dict | None) -> str:
    """The seeds a row's verdict rests on (sequential seeds differ by row):
    n for an interval, "a / b" for a comparison, blank for one value."""
    c = check or {}
    n = c.get("n")
    if c.get("judge") == "every_seed":
        n = len(c.get("values") or [])
    if isinstance(n, list):
        return " / ".join("" if x is None else str(x) for x in n)
    return "" if n is None else str(n)


def _note(r) -> str:
    """A row's note as shown: an "if differs:" note only where the row
    differs, and there with the numbers that decided it."""
    note = r.note if (r.verdict == DIFFERS or not r.note.startswith("if differs:")) else ""
    note = note.removeprefix("if differs: ")
    if r.verdict == DIFFERS:
        why = deciding(r.check, r.value)
        note = f"Decided by: {why}." + (f" {note}" if note else "")
    return note


def _criterion(r) -> str:
    return describe(r.check)


def _verdict_class(verdict: str) -> str:
    return {AGREES: "agrees", DIFFERS: "differs", NOT_SEPARABLE: "notsep", NOT_EVIDENCE: "differs", CONTROL_DIFFERS: "agrees",
            CONTROL_PASSES: "differs", CONTROL_UNCLEAR: "notsep"}.get(verdict, "none")


def write_html(path: Path, md_dir: Path, meta: dict, sections: list[Section]) -> None:
    """The same content as the Markdown, one file, images inlined."""
    c = _counts(sections)
    e = html.escape
    out = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>Reproduction: {e(meta['title'])}</title>",
        "<style>body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
        "table{border-collapse:collapse;margin:1em 0;font-size:14px}td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}"
        "th{background:#f3f3f3}.agrees{color:#17663a}.differs{color:#b3261e;font-weight:bold}.notsep{color:#8a5a00;font-style:italic}.none{color:#777}"
        "img{max-width:100%}code{background:#f3f3f3;padding:1px 4px}</style></head><body>",
        f"<h1>Reproduction: {e(meta['title'])}</h1>" + (f"<p><b>{e(meta['authors'])}</b></p>" if meta.get("authors") else "") + f"<p><em>{e(meta['citation'])}</em></p><ul>",
        f"<li>Mode: <b>{e(meta['mode'])}</b></li>",
        f"<li>Command: <code>{e(meta['command'])}</code></li>",
        f"<li>Runs: {meta['runs']} simulations{e(_later(meta))}, about {meta['wall_s'] / 60:.1f} min of wall time (this paper's share of the simulated packets) ({meta['total_wall_s'] / 60:.1f} min for the whole command, {meta.get('executor') or str(meta['jobs']) + ' parallel jobs'})</li>",
        f"<li>Machine: {e(meta['machine'])}</li><li>longfat commit: {e(meta['commit'])}</li>",
        f"<li>Verdicts: {e(_verdict_line(c, _other_counts(sections)))}</li></ul>",
        "<h2>The paper's claims at a glance</h2><p>Every claim row of the report, in order (negative controls, consistency checks, "
        "sensitivity rows and checks beyond the paper are in the sections below).</p>",
        "<table><tr><th>figure</th><th>claim</th><th>verdict</th><th>seeds</th></tr>",
        *[f"<tr><td>{e(s.title.split(':')[0])}</td><td>{e(r.item)}</td><td class='{_verdict_class(r.verdict)}'>{e(r.verdict)}</td>"
          f"<td>{e(seeds_of(r.check))}</td></tr>" for s, r in claim_rows(sections)],
        "</table>",
        *_coverage_html(meta),
        "<details><summary>How the rows are measured and judged</summary>",
        f"<p>{e(_READING.format(spread=meta.get('spread', 'mean ± sample standard deviation over seeds where there are several')))}</p>",
        *([f"<p>{e(meta['notes'])}</p>"] if meta.get("notes") else []),
        "</details>",
    ]
    for s in sections:
        out.append(f"<h2>{e(s.title)}</h2>")
        for fig in s.figures:
            data = base64.b64encode((md_dir / fig).read_bytes()).decode("ascii")
            out.append(f"<p><img alt='{e(s.title)}' src='data:image/png;base64,{data}'></p>")
        out.append(f"<details><summary>Setup, choices and deviations</summary><p>{e(s.setup)}</p>"
                   + (f"<p><em>Choices and deviations:</em> {e(s.deviations)}</p>" if s.deviations else "") + "</details>")
        out.append("<table><tr><th>what</th><th>paper</th><th>longfat</th><th>seeds</th><th>verdict</th><th>criterion</th><th>note</th></tr>")
        for r in s.rows:
            cls = _verdict_class(r.verdict)
            note = _note(r)
            out.append(
                f"<tr><td>{e(r.item)}</td><td>{e(r.paper)}</td><td>{e(r.measured)}</td><td>{e(seeds_of(r.check))}</td>"
                f"<td class='{cls}'>{e(r.verdict)}</td><td>{e(_criterion(r))}</td><td>{e(note)}</td></tr>"
            )
        out.append("</table>")
    out.append("</body></html>")
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def write_json(path: Path, meta: dict, sections: list[Section]) -> None:
    doc = {
        "meta": meta,
        "sections": [
            {
                "experiment": s.experiment,
                "title": s.title,
                "figures": s.figures,
                "rows": [r.to_json() for r in s.rows],
            }
            for s in sections
        ],
    }
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


PAPER_NAMES = {"ltcp": "LTCP", "htcp": "H-TCP", "ehstcp": "eHSTCP", "tcpgt": "TCP-GT", "plt": "PLT"}


def verdict_table(root: Path, papers: tuple[str, ...], link_prefix: str = "docs/reproductions") -> str:
    """The README's verdict table, from the committed reports' results.json
    under ``root`` (``docs/reproductions``): each paper's claims by verdict,
    then its negative controls."""
    lines = [
        "| paper | report | agree | differ | not separable | not compared | not evidence | decided | negative controls that differ | consistency checks (agree of all) | beyond the paper | coverage |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in papers:
        doc = json.loads((root / p / "results.json").read_text(encoding="utf-8"))
        rows = [r for s in doc["sections"] for r in s["rows"]]
        c = verdict_counts(rows)
        cons, beyond = verdict_counts(rows, "consistency"), verdict_counts(rows, "beyond")
        n_ctl = c[CONTROL_DIFFERS] + c[CONTROL_PASSES] + c[CONTROL_UNCLEAR]
        d, n = decided(c)
        name = PAPER_NAMES.get(p, p)
        link = f"[{link_prefix}/{p}/report.md]({link_prefix}/{p}/report.md)"
        lines.append(f"| {name} | {link} | {c[AGREES]} | {c[DIFFERS]} | {c[NOT_SEPARABLE]} | {c[NO_NUMBER]} | {c[NOT_EVIDENCE]} | "
                     f"{d} of {n} ({100 * d / max(n, 1):.0f} %) | {c[CONTROL_DIFFERS]} of {n_ctl} | "
                     f"{cons[AGREES]} of {sum(cons.values())} | {sum(beyond.values())} | "
                     + (f"{doc['meta']['coverage_score']:.2f} |" if "coverage_score" in doc["meta"] else "not stated |"))
    return "\n".join(lines)
