#!/usr/bin/env python3
"""A fuzz campaign against what longfat does to the user's files and studies.

Where ``fuzz_py.py`` asks whether every *input* gets a result or one line,
this campaign asks whether every *command* leaves the user's files alone. Each
input builds a fresh workspace (a seeded mix of the user's own directories
and files, earlier longfat results, some with the user's notes added or a
file edited, results whose marker predates the manifest, studies, symbolic
links, plain files where a directory is expected) and runs one real command
line in it, in this process, through ``longfat.cli.main``:

* ``outputs``: ``run``, ``compare``, ``sweep``, ``plot`` and ``suite
  --quick`` with ``--out``/``--study``/``--force`` pointing anywhere in the
  workspace: new paths, paths inside results and studies, results holding
  the user's files, links, files, the workspace itself;
* ``study``: a study damaged the ways disks and people damage them (a
  zero-byte, truncated or garbage Parquet file in ``runs/``, ``flows/`` or
  ``links/``, a missing series file, a run of another build, a file
  ``runs/export.parquet``, ``study.json`` as a link, a study path with glob
  characters) and then ``query`` or a resumed ``sweep``;
* ``sql``: ``query`` with statements from a grammar of reads and of every
  way DuckDB can write or reach outside (``COPY ... TO``, ``EXPORT
  DATABASE``, ``ATTACH``, ``INSTALL``/``LOAD``, ``SET``/``RESET``,
  ``PRAGMA``, ``CREATE``/``DROP``/``INSERT``, ``read_csv`` of other files),
  empty and junk text, and study data holding terminal escapes.

What must hold (a violation is a finding, with the input):

* the exit status is 0 or 2 (1 only for a sweep whose runs failed), never a
  traceback, and a refusal (2) is one ``error: ...`` line (after at most a
  few ``warning:`` lines, such as one naming a damaged file);
* a refused command changes nothing at all (the whole workspace, byte for
  byte);
* a command that succeeds changes nothing outside the directories it was
  given (and a ``query`` nothing at all), and every
  file the user made is still there with the same bytes;
* no temporary file or directory of longfat's is left;
* a resumed ``sweep`` repairs a damaged study: afterwards every run of the
  grid has readable files.

    .venv/bin/python scripts/fuzz_files.py --seed 1 --inputs 300

Input i of seed S is a function of (S, i) only: ``--only I`` reruns it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SOURCES = ("outputs", "study", "sql")
OK, REFUSED, BUG = "ok", "refused", "BUG"

SCENARIO = """name = "tiny"
[network]
topology = "dumbbell"
[network.bottleneck]
rate = "20Mbps"
delay = "20ms"
queue = "1bdp"
[[flows]]
cc = "reno"
[run]
duration = "{duration}"
measure_from = "1s"
sample_interval = "200ms"
"""


# ---- the workspace ---------------------------------------------------------------


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry below ``root``: relative path -> ("dir",), ("link",
    target) or ("file", sha256)."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_dir():
                out[rel] = ("dir",)
            else:
                out[rel] = ("file", hashlib.sha256(p.read_bytes()).hexdigest())
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) / d).is_symlink()]
    return out


class Templates:
    """A run result, a compare result and a study of two runs, made once
    per campaign and copied into each workspace."""

    def __init__(self, base: Path):
        self.base = base
        self.scenario = base / "tiny.toml"
        self.scenario.write_text(SCENARIO.format(duration="3s"))
        assert cli("run", str(self.scenario), "-q", "--no-plot", "--out", str(base / "run"))[0] == 0
        assert cli("compare", str(self.scenario), "--cc", "reno,cubic", "-q", "--no-plot", "--out", str(base / "compare"))[0] == 0
        assert cli("sweep", str(self.scenario), "--cc", "reno,cubic", "--seeds", "1", "--workers", "1", "-q", "--out", str(base / "study"))[0] == 0


def cli(*argv: str) -> tuple[int, str, str]:
    """``longfat ARGV`` in this process: (exit status, stdout, stderr)."""
    import longfat.cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = longfat.cli.main(list(argv))
        except SystemExit as e:  # argparse
            code = e.code if isinstance(e.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def build_workspace(rng: random.Random, t: Templates, w: Path) -> tuple[dict[str, Path], set[str]]:
    """A seeded workspace in ``w``; returns its named places and the
    relative paths of the user's own files."""
    user: set[str] = set()

    def user_file(p: Path, text: str) -> None:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        user.add(p.relative_to(w).as_posix())

    places: dict[str, Path] = {"workspace": w}
    user_file(w / "mine" / "thesis.tex", "years of work")
    user_file(w / "mine" / "sub" / "data.csv", "1,2,3")
    places["user dir"] = w / "mine"
    (w / "empty").mkdir()
    places["empty dir"] = w / "empty"
    user_file(w / "file.txt", "a file")
    places["a file"] = w / "file.txt"
    shutil.copytree(t.base / "run", w / "R", symlinks=True)
    places["result"] = w / "R"
    if rng.random() < 0.5:
        user_file(w / "R" / "notes.md", "my analysis")
    if rng.random() < 0.3:
        (w / "R" / "summary.json").write_text("{}\n")  # edited by the user
        user.add("R/summary.json")
    if rng.random() < 0.3:  # a study moved into the result
        shutil.copytree(t.base / "study", w / "R" / "study", symlinks=True)
        user.update(p.relative_to(w).as_posix() for p in (w / "R" / "study").rglob("*") if p.is_file())
    shutil.copytree(t.base / "run", w / "old", symlinks=True)
    (w / "old" / ".longfat-result").write_text('{"kind": "run", "longfat": "0.1.0"}\n')  # before manifests
    places["old-marker result"] = w / "old"
    shutil.copytree(t.base / "compare", w / "C", symlinks=True)
    places["compare result"] = w / "C"
    shutil.copytree(t.base / "study", w / "S", symlinks=True)
    places["study"] = w / "S"
    if rng.random() < 0.3:
        user_file(w / "S" / "README", "what this study is")
    (w / "link").symlink_to(w / "mine", target_is_directory=True)
    places["link to user dir"] = w / "link"
    (w / "dangling").symlink_to(w / "nowhere")
    places["dangling link"] = w / "dangling"
    for name in ("new", "a/b/c", "R/inner", "S/inner", "C/reno/x", "mine/new", "file.txt/x", "R", "grid[1]", "st*"):
        places.setdefault(f"path {name}", w / name)
    return places, user


def pick(rng: random.Random, places: dict[str, Path]) -> tuple[str, Path]:
    name = rng.choice(sorted(places))
    return name, places[name]


# ---- the sources -----------------------------------------------------------------


def gen_outputs(rng: random.Random, t: Templates, places: dict[str, Path]) -> tuple[list[str], list[Path]]:
    """A command writing somewhere in the workspace, and where it may write."""
    force = ["--force"] if rng.random() < 0.6 else []
    sc = str(t.scenario)
    _, p = pick(rng, places)
    kind = rng.choices(["run", "compare", "sweep", "plot", "suite"], [4, 2, 3, 2, 1])[0]
    if kind == "run":
        return ["run", sc, "-q", "--no-plot", "--out", str(p), *force], [p]
    if kind == "compare":
        return ["compare", sc, "--cc", "reno", "-q", "--no-plot", "--out", str(p), *force], [p]
    if kind == "sweep":
        return ["sweep", sc, "--cc", rng.choice(["reno", "reno,cubic"]), "--seeds", "1", "--workers", "1", "-q", "--out", str(p)], [p]
    if kind == "plot":
        _, d = pick(rng, places)
        if rng.random() < 0.5:
            return ["plot", str(d)], [d / "plot.png", d / ".longfat-result"]
        return ["plot", str(d), "--out", str(p.with_suffix(".png") if rng.random() < 0.7 else p), *force], [p.with_suffix(".png"), p]
    _, q = pick(rng, places)
    return ["suite", "--quick", "--cc", "reno", "--seeds", "1", "--workers", "1", "-q", "--out", str(p), "--study", str(q), *force], [p, q]


DAMAGE = ("zero", "truncate", "garbage", "missing-series", "other-build", "export-file", "json-link", "glob-name", "none")


def damage_study(rng: random.Random, w: Path, s: Path) -> tuple[Path, str]:
    """Damages study ``s`` one way; returns the study's path (it may be
    renamed) and what was done."""
    how = rng.choice(DAMAGE)
    table = rng.choice(["runs", "flows", "links"])
    files = sorted((s / table).glob("*.parquet"))
    f = rng.choice(files)
    if how == "zero":
        f.write_bytes(b"")
    elif how == "truncate":
        data = f.read_bytes()
        f.write_bytes(data[: rng.randrange(1, len(data))])
    elif how == "garbage":
        f.write_bytes(os.urandom(rng.randrange(1, 4096)))
    elif how == "missing-series":
        f = rng.choice(sorted((s / rng.choice(["flows", "links"])).glob("*.parquet")))
        f.unlink()
    elif how == "other-build":
        import pyarrow as pa
        import pyarrow.parquet as pq

        runs = sorted((s / "runs").glob("*.parquet"))
        row = pq.read_table(runs[0])
        row = row.set_column(row.column_names.index("build"), "build", pa.array(["0.0.9+000000000000"]))
        row = row.set_column(row.column_names.index("run_id"), "run_id", pa.array(["0" * 20]))
        pq.write_table(row, s / "runs" / ("0" * 20 + ".parquet"))
        for t in ("flows", "links"):  # its series, as a whole run of that build has them
            series = pq.read_table(s / t / runs[0].name)
            series = series.set_column(0, "run_id", pa.array(["0" * 20] * series.num_rows))
            pq.write_table(series, s / t / ("0" * 20 + ".parquet"))
    elif how == "export-file":
        shutil.copy(files[0], s / table / "export.parquet")
    elif how == "json-link":
        (s / "study.json").unlink()
        (s / "study.json").symlink_to(w / "mine" / "thesis.tex")
    elif how == "glob-name":
        glob = w / rng.choice(["grid[1]", "st*", "exp[2024]", "a?b"])
        s.rename(glob)
        if glob.name == "grid[1]":  # and a study its glob would match
            shutil.copytree(glob, w / "grid1", symlinks=True)
        s = glob
    return s, how


SQL_READS = [
    "SELECT cc, count(*) AS n, avg(utilization) FROM runs GROUP BY cc ORDER BY cc",
    "SELECT count(*) FROM runs",
    "SELECT count(*) FROM flows",
    "SELECT * FROM links LIMIT 3",
    "SELECT run_id, build FROM runs ORDER BY run_id",
    "SELECT max(time_s) FROM flows",
    "SELECT '\x1b[2J\x1b]0;owned\x07' AS title",
]
SQL_WRITES = [
    "COPY (SELECT * FROM runs) TO '{s}/runs/export.parquet' (FORMAT parquet)",
    "COPY (SELECT * FROM runs) TO '{s}/runs' (FORMAT parquet, PARTITION_BY cc, OVERWRITE)",
    "COPY runs TO '{w}/out.csv'",
    "EXPORT DATABASE '{w}/exported'",
    "ATTACH '{w}/new.duckdb' AS x",
    "ATTACH '{s}/study.duckdb' AS y; CREATE TABLE y.t AS SELECT 1",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "RESET enable_external_access",
    "SET lock_configuration = false",
    "PRAGMA enable_profiling = 'json'; PRAGMA profiling_output = '{w}/profile.json'; SELECT 1",
    "SET temp_directory = '{w}/spill'",
    "CREATE TABLE t AS SELECT * FROM runs",
    "DROP VIEW runs",
    "CREATE OR REPLACE VIEW runs AS SELECT 1 AS x",
    "SELECT * FROM read_csv('{w}/mine/sub/data.csv')",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM read_parquet('{w}/*/runs/*.parquet')",
    "SELECT * FROM glob('{w}/*')",
    "CALL checkpoint()",
    "VACUUM",
]
SQL_JUNK = ["", "   ", ";", "SELEC 1", "SELECT", "\x00", "SELECT 1; SELECT 2", "-- only a comment", "SELECT 'x' || repeat('y', 100000)"]


def gen_sql(rng: random.Random, w: Path, s: Path) -> str:
    bag = rng.choices([SQL_READS, SQL_WRITES, SQL_JUNK], [2, 5, 2])[0]
    return rng.choice(bag).replace("{s}", str(s)).replace("{w}", str(w))


# ---- one input -------------------------------------------------------------------


def _relative(roots: list[Path], w: Path) -> list[str]:
    """The roots inside the workspace ``w``, relative to it."""
    out = []
    for r in roots:
        try:
            out.append(Path(os.path.abspath(r)).relative_to(w).as_posix())
        except ValueError:
            continue
    return out


def _within(p: str, roots: list[Path], w: Path) -> bool:
    return any(p == rel or p.startswith(rel + "/") for rel in _relative(roots, w))


def _is_parent(p: str, roots: list[Path], w: Path) -> bool:
    return any(rel.startswith(p + "/") for rel in _relative(roots, w))


def check(rc: int, err: str, before: dict, after: dict, user: set[str], allowed: list[Path], w: Path, may_fail: bool = False) -> str | None:
    """The problem with a command's outcome, or None."""
    if "Traceback" in err or "Exception ignored" in err or "panicked" in err:
        return "a traceback or ignored exception on stderr"
    if rc not in ((0, 1, 2) if may_fail else (0, 2)):
        return f"exit status {rc}"
    leftovers = [p for p in after if ".longfat-tmp-" in p or ".longfat-old-" in p]
    if leftovers:
        return f"longfat's temporary entries left: {leftovers[:3]}"
    if rc == 2:
        # One error line, last; before it only warnings (a damaged file named).
        lines = [l for l in err.splitlines() if l.strip()]
        if not lines or not lines[-1].startswith("error: ") or any(not l.startswith(("warning: ", "note: ")) for l in lines[:-1]):
            return f"a refusal that is not one 'error:' line: {lines[:3]}"
        if after != before:
            changed = sorted(set(before) ^ set(after) | {p for p in before if p in after and before[p] != after[p]})
            return f"a refused command changed the workspace: {changed[:5]}"
        return None
    for p in sorted(user):
        if before.get(p) != after.get(p):
            return f"the user's file {p} was changed or removed"
    changed = sorted(set(before) ^ set(after) | {p for p in before if p in after and before[p] != after[p]})
    # A missing parent of an output is made for it (mkdir -p).
    outside = [p for p in changed if not _within(p, allowed, w) and not (after.get(p) == ("dir",) and p not in before and _is_parent(p, allowed, w))]
    if outside:
        return f"changed outside the directories it was given: {outside[:5]}"
    return None


def run_input(t: Templates, seed: int, i: int, source: str | None = None, work: Path | None = None) -> dict:
    rng = random.Random(f"{seed}-{i}")
    source = source or SOURCES[rng.randrange(len(SOURCES))]
    with tempfile.TemporaryDirectory(prefix="fuzz-files-", dir=work) as tmp:
        w = Path(tmp)
        places, user = build_workspace(rng, t, w)
        may_fail = False
        if source == "outputs":
            argv, allowed = gen_outputs(rng, t, places)
            how = None
        else:
            s, how = damage_study(rng, w, places["study"])
            if source == "sql":
                argv, allowed = ["query", str(s), gen_sql(rng, w, s), "--format", rng.choice(["table", "csv", "json"])], []
            elif rng.random() < 0.5:
                argv, allowed = ["query", str(s), "SELECT cc, count(*) FROM runs GROUP BY cc", "--format", rng.choice(["table", "csv", "json"])], []
            else:
                argv, allowed = ["sweep", str(t.scenario), "--cc", "reno,cubic", "--seeds", "1", "--workers", "1", "-q", "--out", str(s)], [s]
                may_fail = True
        before = snapshot(w)
        t0 = time.monotonic()
        rc, out, err = cli(*argv)
        after = snapshot(w)
        problem = check(rc, err, before, after, user, allowed, w, may_fail)
        if problem is None and argv[0] == "sweep" and how is not None and rc == 0:
            problem = _repaired(Path(argv[-1]))
        shown = [a.replace(str(w), "W") for a in argv]
        return {
            "id": i,
            "source": source,
            "damage": how,
            "argv": shown,
            "rc": rc,
            "stderr": err.replace(str(w), "W")[-2000:],
            "seconds": round(time.monotonic() - t0, 3),
            "outcome": BUG if problem else (OK if rc == 0 else REFUSED),
            "problem": problem,
        }


def _repaired(study: Path) -> str | None:
    """After a resumed sweep, every run of the study has readable files."""
    import pyarrow.parquet as pq

    for f in sorted((study / "runs").glob("*.parquet")):
        if len(f.stem) != 20:
            continue
        for table in ("runs", "flows", "links"):
            try:
                pq.read_metadata(study / table / f.name)
            except Exception as e:
                return f"a resumed sweep left {table}/{f.name} unreadable ({type(e).__name__})"
    return None


def campaign(seed: int, inputs: int, sources: tuple[str, ...] = SOURCES, only: int | None = None, work: Path | None = None, progress=None) -> dict:
    os.environ.setdefault("COLUMNS", "200")
    with tempfile.TemporaryDirectory(prefix="fuzz-files-templates-", dir=work) as base:
        t = Templates(Path(base))
        results = []
        ids = [only] if only is not None else range(inputs)
        for n, i in enumerate(ids):
            rng = random.Random(f"{seed}-{i}-source")
            src = sources[rng.randrange(len(sources))]
            results.append(run_input(t, seed, i, src, work))
            if progress:
                progress(n + 1, len(ids))
    counts: dict[str, int] = {}
    by_source: dict[str, dict[str, int]] = {}
    for r in results:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
        s = by_source.setdefault(r["source"], {})
        s[r["outcome"]] = s.get(r["outcome"], 0) + 1
    return {"seed": seed, "inputs": len(results), "counts": counts, "by_source": by_source, "failures": [r for r in results if r["outcome"] == BUG], "results": results}


def report(summary: dict) -> str:
    lines = [f"seed {summary['seed']}: {summary['inputs']} inputs: " + ", ".join(f"{k} {v}" for k, v in sorted(summary["counts"].items()))]
    for s, c in sorted(summary["by_source"].items()):
        lines.append(f"  {s}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    for r in summary["failures"][:20]:
        lines.append(f"  BUG input {r['id']} ({r['source']}, {r['damage']}): {r['problem']}: longfat {' '.join(r['argv'])} -> {r['rc']}: {r['stderr'].strip()[:300]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--inputs", type=int, default=100)
    ap.add_argument("--sources", default=",".join(SOURCES))
    ap.add_argument("--only", type=int)
    ap.add_argument("--json", help="write every input's outcome to this file")
    a = ap.parse_args(argv)
    sources = tuple(a.sources.split(","))

    def progress(n, total):
        print(f"\r{n}/{total}", end="", file=sys.stderr, flush=True)

    summary = campaign(a.seed, a.inputs, sources, a.only, progress=progress)
    print(file=sys.stderr)
    print(report(summary))
    if a.json:
        Path(a.json).write_text(json.dumps(summary, indent=1) + "\n")
    return 1 if summary["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
