"""Where longfat writes, and the rules that keep it from destroying anything.

The rule: longfat never deletes or replaces a file or directory it did not
create. Every result directory longfat writes (``run``, ``compare``, each
paper of ``reproduce``, ``suite``'s card) carries a marker file,
``.longfat-result``, that lists every file longfat wrote there with its size
and SHA-256 (the manifest). An existing output directory is used only if it
is empty, or, with an explicit ``--force``, if it carries that marker and
holds exactly the files of its manifest, unchanged: a file the user added
(notes, a study made inside it) or edited since makes ``--force`` refuse,
naming it. Output directories (results and studies) are never nested inside
one another, so replacing one can never take another with it. Symbolic
links, mount points and non-directories are never written through or
replaced.

A result is first written into a hidden temporary directory beside its
final place, ``.<name>.longfat-tmp-<pid>-<random>``, and renamed into place
when complete; an older result being replaced is first renamed aside to
``.<name>.longfat-old-<pid>-<random>`` and then removed. A run that is killed
(SIGKILL, power loss) can leave such a directory behind; the next run that
writes into the same parent directory removes it, once it is sure that the
process that made it is gone (its pid is not alive and, for a temporary
directory, the lock file inside it is not locked). Nothing whose name does
not match those two patterns is ever removed.

Terminating signals that arrive while a result is being renamed into place
(or a temporary directory removed) are held back until that step is done, so
an interruption never leaves an old result renamed aside and no new one.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import stat
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from longfat._native import ScenarioError

#: The file that makes a directory a longfat result directory.
MARKER = ".longfat-result"
#: Kinds of result directory (the marker's "kind").
KINDS = ("run", "compare", "reproduction", "suite")
#: Lock file inside a temporary directory, flock()ed by the process writing it.
LOCK = ".longfat-lock"
#: The default parent of run and compare results.
RESULTS = Path("results")

# .<name>.longfat-tmp-<pid>-<8 hex> (a directory, or a file for plot images)
# and .<name>.longfat-old-<pid>-<8 hex> (an old result being removed).
_OURS = re.compile(r"^\..+\.longfat-(?P<kind>tmp|old)-(?P<pid>[0-9]+)-[0-9a-f]{8}$")

#: Every result directory (or plot file) committed by this process, in order:
#: the command line reports these when it is interrupted.
COMMITTED: list[Path] = []


def longfat_version() -> str:
    try:
        from importlib.metadata import version

        return version("longfat")
    except Exception:  # running from a source tree without metadata
        return "unknown"


def marker_text(kind: str, files: dict[str, dict] | None = None) -> str:
    """The marker file's content: the kind, the version and the manifest
    (``files``: relative path -> size and SHA-256). Deterministic (no time,
    no host), so that saving the same result twice gives identical
    directories."""
    if kind not in KINDS:
        raise ValueError(f"unknown result kind {kind!r}")
    return json.dumps({"kind": kind, "longfat": longfat_version(), "files": files or {}}, sort_keys=True, indent=1) + "\n"


def _digest(path: Path) -> dict:
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
            size += len(chunk)
    return {"size": size, "sha256": h.hexdigest()}


def _walk(directory: Path) -> Iterator[tuple[str, os.DirEntry]]:
    """Every entry below ``directory`` (relative path with '/', entry),
    parents before children; links are reported, never followed."""
    stack = [("", Path(directory))]
    while stack:
        prefix, d = stack.pop()
        with os.scandir(d) as it:
            entries = sorted(it, key=lambda e: e.name)
        for e in entries:
            rel = prefix + e.name
            yield rel, e
            if e.is_dir(follow_symlinks=False):
                stack.append((rel + "/", Path(e.path)))


def manifest(directory: Path) -> dict[str, dict]:
    """The manifest of a result directory being written: every regular
    file below it (its own marker and lock excepted)."""
    return {rel: _digest(Path(e.path)) for rel, e in _walk(directory) if e.is_file(follow_symlinks=False) and rel not in (MARKER, LOCK)}


def write_marker(directory: Path, kind: str) -> None:
    """Marks ``directory`` as a finished result of ``kind``, listing every
    file in it (write the marker last)."""
    (Path(directory) / MARKER).write_text(marker_text(kind, manifest(Path(directory))))


def _marker(path: Path) -> dict | None:
    """The marker of directory ``path`` (a regular file holding a JSON
    object), or None."""
    m = path / MARKER
    if path.is_symlink() or not path.is_dir() or m.is_symlink() or not m.is_file():
        return None
    try:
        data = json.loads(m.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def is_result_dir(path: str | Path) -> bool:
    """True if ``path`` is a real directory holding a longfat marker (a
    regular file whose JSON names one of our kinds)."""
    m = _marker(Path(path))
    return m is not None and m.get("kind") in KINDS


def foreign_entries(path: str | Path) -> list[str]:
    """What in the result directory ``path`` longfat did not write there,
    by its marker's manifest: files added (or replaced by another kind of
    entry) since, files changed since, and directories holding no listed
    file. Empty if ``--force`` may replace the directory whole. A marker
    without a manifest (written before longfat kept one) lists nothing, so
    everything counts."""
    p = Path(path)
    m = _marker(p) or {}
    files = m.get("files")
    files = files if isinstance(files, dict) else {}
    listed_dirs = {"/".join(rel.split("/")[:i]) for rel in files for i in range(1, rel.count("/") + 1)}
    out = []
    for rel, e in _walk(p):
        if rel in (MARKER, LOCK):
            continue
        if e.is_dir(follow_symlinks=False) and rel in listed_dirs:
            continue
        if e.is_file(follow_symlinks=False) and rel in files:
            if _digest(Path(e.path)) == files[rel]:
                continue
            out.append(f"{rel} (changed since longfat wrote it)")
            continue
        out.append(rel + ("/" if e.is_dir(follow_symlinks=False) else ""))
    return out


def record_file(directory: Path, rel: str) -> None:
    """Adds (or updates) one file in the manifest of the result directory
    ``directory`` after longfat wrote it there (``plot DIR`` redraws
    plot.png), so that the manifest keeps listing everything longfat
    wrote. The marker is replaced in one rename."""
    m = _marker(directory)
    if m is None or m.get("kind") not in KINDS:
        return
    files = m.get("files") if isinstance(m.get("files"), dict) else {}
    files[rel] = _digest(directory / rel)
    tmp = _hidden_sibling(directory / MARKER, "tmp")
    try:
        tmp.write_text(marker_text(m["kind"], files))
        with deferred_signals():
            os.replace(tmp, directory / MARKER)
    finally:
        tmp.unlink(missing_ok=True)


#: Kinds of the directories longfat owns whole (results, and studies, whose
#: kind longfat.store declares).
_OWNED_KINDS = (*KINDS, "study")


def enclosing_owned(path: str | Path) -> tuple[Path, str] | None:
    """The nearest directory above ``path`` (symbolic links resolved) that
    longfat owns whole: a result directory or a study, with its kind; None
    if there is none."""
    real = Path(os.path.realpath(os.path.abspath(os.fspath(path))))
    for a in real.parents:
        m = _marker(a)
        if m is not None and m.get("kind") in _OWNED_KINDS:
            return a, m["kind"]
    return None


def check_not_nested(path: str | Path, field: str) -> None:
    """Refuses an output (result directory or study) inside another
    directory longfat owns whole: replacing that one (``--force``) would
    take this one with it, and this one would make that one's ``--force``
    refuse."""
    inside = enclosing_owned(path)
    if inside is not None:
        where, kind = inside
        what = "study" if kind == "study" else f"{kind} result"
        raise ScenarioError(f"{field}: {path} is inside the longfat {what} {where}; longfat does not nest its outputs, choose a directory outside it", field)


def check_apart(a: str | Path, field_a: str, b: str | Path, field_b: str) -> None:
    """Refuses two outputs of one command that are the same directory or
    one inside the other (``suite --out C --study C/st``)."""
    ra = Path(os.path.realpath(os.path.abspath(os.fspath(a))))
    rb = Path(os.path.realpath(os.path.abspath(os.fspath(b))))
    if ra == rb:
        raise ScenarioError(f"{field_b}: {b} is the same directory as {field_a} {a}; give them different directories, neither inside the other", field_b)
    if ra in rb.parents or rb in ra.parents:
        inner, outer = (b, a) if ra in rb.parents else (a, b)
        raise ScenarioError(f"{field_b}: {inner} is inside {outer}; give {field_a} and {field_b} directories neither of which is inside the other", field_b)


# ---- names and paths ----------------------------------------------------------


def plain_name(name: object, field: str = "name") -> str:
    """``name`` if it can name a directory inside ``results/``: a non-empty
    string with no path separator that is not ``.`` or ``..`` (nor one of
    longfat's temporary names). Raises ScenarioError(field) otherwise."""
    if not isinstance(name, str):
        raise ScenarioError(f"{field}: must be a string", field)
    bad = (
        not name
        or name in (".", "..")
        or any(c in name for c in "/\\\0")
        or _OURS.match(name) is not None
    )
    if bad:
        raise ScenarioError(
            f"{field}: {name!r} cannot name a result directory; it must be a plain file name "
            "(not empty, no '/' or '\\', not '.' or '..'); or give the output with --out",
            field,
        )
    return name


def default_output(name: object, suffix: str = "", field: str = "name") -> Path:
    """``results/<name><suffix>``, refusing a name that would leave ``results/``."""
    return RESULTS / (plain_name(name, field) + suffix)


def normalize_path(path: str | Path, field: str) -> Path:
    """The path with ``.`` and ``..`` resolved lexically (symbolic links are
    kept, so that a link as the last component can be refused)."""
    p = Path(os.path.abspath(os.fspath(path)))
    if not p.name:
        raise ScenarioError(f"{field}: {path} is the file system root; choose a directory for the results", field)
    return p


def check_parent_writable(p: Path, shown: str | Path, field: str) -> None:
    """The nearest existing ancestor of ``p`` must be a directory we can write."""
    anc = p.parent
    while not os.path.lexists(anc) and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise ScenarioError(f"{field}: cannot write {shown}: {anc} is not a directory", field)
    if not os.access(anc, os.W_OK | os.X_OK):
        raise ScenarioError(f"{field}: cannot write {shown}: no permission to write in {anc}", field)


def check_output_dir(path: str | Path, force: bool, field: str = "--out", *, clean: bool = True) -> None:
    """Refuses (ScenarioError naming ``field``) an output directory longfat
    must not write: a symbolic link, a non-directory, a non-empty directory
    (unless ``force``), or with ``force`` a non-empty directory without the
    longfat marker. A missing or empty directory is fine. Also removes stale
    temporary directories of killed longfat runs beside it (``clean``)."""
    p = normalize_path(path, field)
    if p.is_symlink():
        raise ScenarioError(f"{field}: {path} is a symbolic link; longfat does not write through or replace links, choose another directory", field)
    if p.exists():
        if not p.is_dir():
            raise ScenarioError(f"{field}: {path} exists and is not a directory; longfat does not replace it, choose another path", field)
        if os.path.ismount(p):
            # A result is renamed into place, and a mount point cannot be
            # renamed onto (EBUSY): say so before the run, not after it.
            raise ScenarioError(f"{field}: {path} is a mount point; longfat writes a result as a new directory renamed into place, so choose a directory inside it (e.g. {p / 'results'})", field)
        if any(p.iterdir()):
            if not force:
                raise ScenarioError(f"{field}: {path} is not empty; choose another directory, or pass --force to replace an earlier longfat result", field)
            if not is_result_dir(p):
                raise ScenarioError(f"{field}: {path} is not a longfat result directory (no {MARKER} marker); longfat replaces only its own results", field)
            _refuse_foreign(p, path, field)
    else:
        check_parent_writable(p, path, field)
    if _OURS.match(p.name):
        raise ScenarioError(f"{field}: {path}: that name is reserved for longfat's temporary directories", field)
    check_not_nested(p, field)
    if clean:
        clean_stale(p.parent)


def _refuse_foreign(p: Path, shown: str | Path, field: str) -> None:
    """--force replaces an earlier result only if it holds nothing but the
    files longfat wrote there, unchanged."""
    foreign = foreign_entries(p)
    if foreign:
        listed = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        why = "" if isinstance((_marker(p) or {}).get("files"), dict) else " (its marker, from an older longfat, lists no files)"
        raise ScenarioError(
            f"{field}: {shown} holds what longfat did not write there{why}: {listed}; --force replaces only an earlier result's own files: move these out, or choose another directory",
            field,
        )


def check_container(path: str | Path, field: str = "--out") -> None:
    """A directory longfat writes result directories into (``reproduce
    --out``): it may exist with anything in it, but must be a directory."""
    p = normalize_path(path, field)
    if p.exists():
        if not p.is_dir():
            raise ScenarioError(f"{field}: {path} exists and is not a directory; choose another path", field)
    else:
        check_parent_writable(p, path, field)


def check_output_file(path: str | Path, force: bool, field: str = "--out", *, replaceable: bool = False) -> None:
    """Refuses an output file longfat must not write: a directory, a link,
    or an existing file unless ``force`` (or ``replaceable``: a file longfat
    wrote itself, such as plot.png in a result directory)."""
    p = normalize_path(path, field)
    if p.is_symlink():
        raise ScenarioError(f"{field}: {path} is a symbolic link; longfat does not write through or replace links, choose another path", field)
    if p.exists():
        if not p.is_file():
            raise ScenarioError(f"{field}: {path} exists and is not a regular file; choose another path", field)
        if not (force or replaceable):
            raise ScenarioError(f"{field}: {path} exists; choose another file name, or pass --force to replace it", field)
    else:
        check_parent_writable(p, path, field)
    clean_stale(p.parent)


# ---- stale temporary directories of killed runs -------------------------------


def pid_alive(pid: int) -> bool:
    """True unless ``pid`` certainly names no running process (a zombie,
    already dead but not yet reaped, counts as gone)."""
    if pid <= 0:
        return True  # not ours to judge
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat[stat.rindex(")") + 2] != "Z"
    except (OSError, ValueError, IndexError):
        return True


def _unlocked(lock: Path) -> bool:
    """True if nobody holds the flock on ``lock`` (its writer has exited)."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing releases a lock we took


def clean_stale(parent: str | Path) -> list[Path]:
    """Removes, from ``parent``, temporary and set-aside directories (and
    temporary plot files) of longfat runs whose process is gone. Only names
    matching longfat's own patterns are considered; a temporary directory
    must also hold our lock file, unlocked (or be empty). Returns what was
    removed."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for e in entries:
        m = _OURS.match(e.name)
        if not m or pid_alive(int(m["pid"])):
            continue
        path = Path(e.path)
        try:
            if e.is_symlink():
                continue
            if e.is_dir():
                if m["kind"] == "tmp" and not os.path.lexists(path / LOCK):
                    # Killed between creating the directory and its lock
                    # file: it can only be empty, and rmdir removes nothing else.
                    os.rmdir(path)
                    removed.append(path)
                    continue
                if m["kind"] == "tmp" and not _unlocked(path / LOCK):
                    continue
                with deferred_signals():
                    shutil.rmtree(path)
            elif e.is_file() and m["kind"] == "tmp":
                os.unlink(path)
            else:
                continue
            removed.append(path)
        except OSError:
            continue  # removed concurrently, or not ours to remove after all
    return removed


# ---- signals ------------------------------------------------------------------

_TERMINATING = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, SIGTERM or SIGHUP: unwinds like Ctrl-C (temporary files are
    removed on the way) and exits with 128 + the signal's number."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


#: The first terminating signal this command received (None before one).
#: The handler raises Interrupted at once, but code between the handler and
#: the command (DuckDB turning it into its own exception, matplotlib
#: printing "Exception ignored" in a callback, Dask starting a cluster) can
#: swallow it: the flag stays set, and check_interrupted raises it again at
#: the next safe point (before a result is committed, after the study's
#: database is rebuilt, before the command reports success).
_RECEIVED: list[int] = []


def on_terminating_signal(signum: int, _frame=None) -> None:
    """The command line's handler: remember the signal, then raise."""
    if not _RECEIVED:
        _RECEIVED.append(signum)
    raise Interrupted(signum)


def check_interrupted() -> None:
    """Raises Interrupted if a terminating signal arrived, even one whose
    exception something swallowed."""
    if _RECEIVED:
        raise Interrupted(_RECEIVED[0])


def reset_interrupted() -> None:
    """Forgets received signals (a new command in the same process)."""
    _RECEIVED.clear()


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Holds back SIGINT, SIGTERM and SIGHUP for the duration of a short
    step that must not be cut in half (renames into place, removing a
    temporary directory); a signal that arrived meanwhile is delivered,
    to whatever handler was in place, when the step is done."""
    if threading.current_thread() is not threading.main_thread():
        yield  # handlers can be changed only from the main thread
        return
    pending: list[int] = []
    previous = {}
    for s in _TERMINATING:
        if signal.getsignal(s) in (None, signal.SIG_IGN):
            continue  # ignored, or a handler installed outside Python: leave it alone
        previous[s] = signal.signal(s, lambda signum, _frame: pending.append(signum))
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        if pending:
            signal.raise_signal(pending[0])  # runs the restored handler now


# ---- writing a result directory -----------------------------------------------


def _hidden_sibling(out: Path, kind: str) -> Path:
    """A fresh name ``.<name>.longfat-<kind>-<pid>-<random>`` beside ``out``
    (the name cut short if it would exceed the file system's limit)."""
    return out.parent / f".{out.name[:180]}.longfat-{kind}-{os.getpid()}-{secrets.token_hex(4)}"


def _make_temp_dir(out: Path) -> tuple[Path, int]:
    """Creates the temporary directory and its lock file, locked; returns
    the directory and the lock's descriptor (closing it drops the lock)."""
    while True:
        tmp = _hidden_sibling(out, "tmp")
        try:
            os.mkdir(tmp)  # mode 0777 less the umask, as any directory
            break
        except FileExistsError:
            continue
    fd = os.open(tmp / LOCK, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return tmp, fd


def _commit(tmp: Path, out: Path, force: bool, field: str) -> None:
    """Renames the finished ``tmp`` to ``out``. An empty directory at ``out``
    is replaced by the rename itself; an earlier longfat result (``force``)
    is renamed aside first and removed after. The rename refuses anything
    that appeared at ``out`` since it was checked."""
    old = None
    try:
        with deferred_signals():
            if out.exists() and any(out.iterdir()):
                old = _hidden_sibling(out, "old")
                out.rename(old)
                if not is_result_dir(old) or foreign_entries(old):  # swapped or added to meanwhile
                    old.rename(out)
                    old = None
                    check_output_dir(out, force, field, clean=False)  # names what is there
                    raise ScenarioError(f"{field}: {out} changed while the results were being computed; nothing replaced", field)
            try:
                tmp.rename(out)
            except OSError as e:
                if old is not None:
                    old.rename(out)  # put the earlier result back
                    old = None
                if e.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                    raise ScenarioError(f"{field}: {out} appeared while the results were being computed; nothing replaced, choose another directory", field) from None
                raise
            COMMITTED.append(out)
            (out / LOCK).unlink(missing_ok=True)
        # A signal held back above is raised on leaving the block; the
        # earlier result, already replaced, is removed in any case.
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)  # if cut short, clean_stale finishes it


@contextmanager
def made_dirs(path: str | Path) -> Iterator[Path]:
    """Makes directory ``path`` and its missing parents; if the block fails
    (an exception or an interruption), removes again, deepest first, those
    it made that are still empty, so a failed command leaves no empty
    directories behind."""
    path = Path(os.path.abspath(os.fspath(path)))
    missing: list[Path] = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    path.mkdir(parents=True, exist_ok=True)
    try:
        yield path
    except BaseException:
        for d in missing:
            try:
                d.rmdir()
            except OSError:  # not empty (or not ours any more): keep it and its parents
                break
        raise


@contextmanager
def atomic_dir(out: str | Path, *, force: bool = False, kind: str, field: str = "--out") -> Iterator[Path]:
    """Yields a fresh hidden temporary directory beside ``out`` to write a
    result into; when the block finishes it gets the marker and is renamed
    to ``out`` (which must be missing, empty, or with ``force`` an earlier
    longfat result). On any exception or interruption the temporary
    directory is removed and ``out`` is left as it was."""
    shown = out
    out = normalize_path(out, field)
    marker_text(kind)  # an unknown kind is a bug: fail before any work
    check_output_dir(shown, force, field)
    tmp: Path | None = None
    lock_fd: int | None = None
    with made_dirs(out.parent):
        try:
            # Created with signals held back, inside the try: a signal can no
            # longer land between making the directory and owning its removal.
            with deferred_signals():
                tmp, lock_fd = _make_temp_dir(out)
            yield tmp
            write_marker(tmp, kind)
            check_output_dir(shown, force, field, clean=False)  # something may have appeared meanwhile
            _take_over_attributes(out, tmp)
            check_interrupted()  # a signal a library swallowed while the result was written
            _commit(tmp, out, force, field)
        except BaseException:
            if tmp is not None:
                _remove_despite_signals(tmp)
            raise
        finally:
            if lock_fd is not None:
                os.close(lock_fd)


def _take_over_attributes(out: Path, tmp: Path) -> None:
    """The directory that replaces an existing one (empty, or an earlier
    result) keeps its owner, group, mode and extended attributes (POSIX
    ACLs are extended attributes), as if longfat had written into it."""
    try:
        st = os.stat(out, follow_symlinks=False)
    except FileNotFoundError:
        return
    try:
        os.chown(tmp, st.st_uid, st.st_gid)
    except PermissionError:
        pass  # not root: the result stays ours, as any new file would be
    try:
        names = os.listxattr(out, follow_symlinks=False)
    except OSError:  # no extended attributes on this file system
        names = []
    for name in names:
        try:
            os.setxattr(tmp, name, os.getxattr(out, name, follow_symlinks=False), follow_symlinks=False)
        except OSError:
            pass  # an attribute only its owner or root may set
    os.chmod(tmp, stat.S_IMODE(st.st_mode))


def _remove_despite_signals(tmp: Path) -> None:
    """Removes a temporary directory even if a second signal interrupts the
    removal (its exception is raised once the directory is gone)."""
    pending: BaseException | None = None
    while True:
        try:
            with deferred_signals():
                shutil.rmtree(tmp, ignore_errors=True)
            break
        except BaseException as e:  # a signal delivered as the step ended
            pending = e
    if pending is not None and not tmp.exists():
        raise pending


@contextmanager
def atomic_file(out: str | Path) -> Iterator[Path]:
    """Yields a hidden temporary file name beside ``out`` (already checked
    with check_output_file); on success it replaces ``out`` in one rename,
    on any error it is removed."""
    out = Path(os.path.abspath(os.fspath(out)))
    with made_dirs(out.parent):
        while True:
            tmp = _hidden_sibling(out, "tmp")
            try:
                os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
                break
            except FileExistsError:
                continue
        try:
            yield tmp
            check_interrupted()
            with deferred_signals():
                os.replace(tmp, out)
                COMMITTED.append(out)
            if is_result_dir(out.parent):  # plot.png redrawn in a result directory
                record_file(out.parent, out.name)
        except BaseException:
            with deferred_signals():
                tmp.unlink(missing_ok=True)
            raise
