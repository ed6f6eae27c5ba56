"""The kernel path's BPF congestion controls: list, load, unload, status.

The loader is Rust (crates/longfat-kernel/src/programs.rs, through
``longfat._native``): loading registers an algorithm with the kernel as
``longfat_<name>`` and pins its link under /sys/fs/bpf/longfat, so it stays
selectable with ``setsockopt(TCP_CONGESTION)`` or ``iperf3 -C`` after this
process exits; unloading removes it. A name may be the algorithm's
(``ltcp``), the kernel's (``longfat_ltcp``) or ``all``.

The pin directory is machine-wide: other users, other longfat commands (a
testbed run, the standing testbed) and other tools load and pin there too.
So longfat records what it loads, per owner (see "What longfat loaded"
below), and unloads a program only when it loaded it and its last owner
lets it go: never a program another tool registered or pinned, never one a
running command or another user still holds.

Every failure is a :class:`KernelError` with a one-line message.
"""

from __future__ import annotations

import fcntl
import json
import os
import pwd
import secrets
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from longfat._native import (
    KernelError,
    kernel_built,
    kernel_load,
    kernel_not_built_reason,
    kernel_resolve,
    kernel_socket_state,
    kernel_status,
    kernel_unload,
)
from longfat.outdir import deferred_signals, pid_alive

__all__ = [
    "KernelError",
    "Owner",
    "RECORD_DIR",
    "built",
    "default_log_dir",
    "holders",
    "load",
    "not_built_reason",
    "process_owner",
    "reap",
    "release",
    "resolve",
    "socket_state",
    "status",
    "unload",
    "user_owner",
]


def built() -> list[tuple[str, str]]:
    """(algorithm, kernel name) of every BPF program in this build."""
    return list(kernel_built())


def not_built_reason() -> str | None:
    """Why this build has no BPF programs (no clang-19, bpftool or BTF), or None."""
    return kernel_not_built_reason()


def resolve(name: str) -> tuple[str, str]:
    """(algorithm, kernel name) for ``ltcp``, ``longfat_ltcp``, ..."""
    return tuple(kernel_resolve(name))


def default_log_dir() -> Path:
    """Where a verifier's log goes when a program fails to load."""
    return Path(tempfile.gettempdir()) / "longfat-kernel"


# ---- What longfat loaded ------------------------------------------------------------
#
# One JSON file per owner in RECORD_DIR, replaced atomically under the
# flock on LOCK: {"owner", "command", "pid", "start", "programs": {kernel
# name: {"algo", "pin": [inode, ctime_ns] | null, "since_ns"}}}. "pin" is
# the identity of the bpffs pin at /sys/fs/bpf/longfat/<algo> that the owner
# loaded or found loaded by longfat: a pin made later at the same path
# (after an unload, by another tool) has another inode and creation time, so
# it is not longfat's. A program is longfat's exactly when a record names
# its current pin. A load is recorded before it starts ("pin": null, stamped
# "since_ns") so that a command killed between the pin and the record still
# leaves a claim: the pin made after that stamp is adopted as the owner's.

#: Where the records are (tmpfs: they go at reboot, as the pins do).
RECORD_DIR = Path("/run/longfat/kernel")
LOCK = Path("/run/longfat/kernel.lock")
#: The file system stamps a pin with its coarse clock, which may lag the
#: claim's stamp by a tick: a pending claim adopts a pin this much older.
_CLOCK_SLACK_NS = 1_000_000_000


def _start_time(pid: int) -> int | None:
    """The process's start time (clock ticks since boot): a pid reused by
    another process has another."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat[stat.rindex(")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


@dataclass(frozen=True)
class Owner:
    """Who holds a program. A command that runs (``pid`` set) holds it while
    its process lives: once it is gone (SIGKILL), :func:`reap` unloads what
    it held. A standing owner (``pid`` None: a user's ``longfat kernel
    load``, the standing testbed) holds it until its command releases it
    (``longfat kernel unload``, ``longfat testbed down``)."""

    key: str
    command: str
    pid: int | None = None
    start: int | None = None

    def alive(self) -> bool:
        if self.pid is None:
            return True
        return pid_alive(self.pid) and (self.start is None or _start_time(self.pid) == self.start)

    def __str__(self) -> str:
        return self.command if self.pid is None else f"{self.command} (pid {self.pid})"


def process_owner(command: str) -> Owner:
    """A new owner for this process (one per use: two testbeds of one
    process each release only their own programs)."""
    pid = os.getpid()
    return Owner(f"pid{pid}-{secrets.token_hex(4)}", command, pid, _start_time(pid))


def _login_uid() -> int:
    """The user behind this command: the login uid (kept across sudo and
    su), else sudo's SUDO_UID, else the real uid."""
    try:
        uid = int(Path("/proc/self/loginuid").read_text())
        if uid != 0xFFFFFFFF:  # (uid_t)-1: no login session (containers, services)
            return uid
    except (OSError, ValueError):
        pass
    sudo = os.environ.get("SUDO_UID", "")
    return int(sudo) if sudo.isdigit() else os.getuid()


def user_owner() -> Owner:
    """The owner of what this user loaded with ``longfat kernel load``: one
    per user, so that another user's ``kernel unload all`` leaves it."""
    uid = _login_uid()
    try:
        name = f" ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        name = ""
    return Owner(f"user{uid}", f"`longfat kernel load` by uid {uid}{name}")


def _owner(record: dict) -> Owner:
    return Owner(record["owner"], record["command"], record.get("pid"), record.get("start"))


def _pin_id(pin_dir: Path, algo: str) -> list[int] | None:
    """The identity of the pin at pin_dir/algo: [inode, creation time]."""
    try:
        st = os.stat(pin_dir / algo)
    except OSError:
        return None
    return [st.st_ino, st.st_ctime_ns]


@contextmanager
def _locked(doing: str) -> Iterator[None]:
    """The registry's lock: one longfat command at a time decides what to
    load and unload (a load and its record, an unload and the check that
    nobody else holds the program, are one step for the others)."""
    try:
        RECORD_DIR.mkdir(parents=True, exist_ok=True)
        fd = os.open(LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except PermissionError:
        raise KernelError(f"{doing} BPF congestion controls needs root: run as root (cannot write {RECORD_DIR})") from None
    except OSError as e:
        raise KernelError(f"cannot open {LOCK}: {e.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing drops the lock


class _Registry:
    """The records and the pins as they are now, under the lock."""

    def __init__(self, *, adopt: bool = True) -> None:
        s = kernel_status()
        self.pin_dir = Path(s["pin_dir"])
        self.registered = set(s["available"])
        self.records: dict[str, dict] = {}
        for path in sorted(RECORD_DIR.glob("*.json")):
            try:
                rec = json.loads(path.read_text())
                if path.stem == rec["owner"] and isinstance(rec["programs"], dict):
                    self.records[rec["owner"]] = rec
            except (OSError, ValueError, KeyError, TypeError):
                continue  # not a record of ours: it proves nothing longfat's
        if adopt:  # writes: under the lock only
            self._adopt_pending()

    def pin(self, algo: str) -> list[int] | None:
        return _pin_id(self.pin_dir, algo)

    def _adopt_pending(self) -> None:
        """A claim made before a load that never recorded its pin (the
        command was killed in between) takes the pin made after it, when no
        other record names that pin."""
        named = {(ca, tuple(c["pin"])) for r in self.records.values() for ca, c in r["programs"].items() if c.get("pin")}
        for key, rec in self.records.items():
            for ca, c in rec["programs"].items():
                if c.get("pin"):
                    continue
                now = self.pin(c["algo"])
                if now and now[1] >= c.get("since_ns", 0) - _CLOCK_SLACK_NS and (ca, tuple(now)) not in named:
                    c["pin"] = now
                    named.add((ca, tuple(now)))
                    self.save(key)

    def holders(self, algo: str, ca: str) -> list[Owner]:
        """The owners whose claim names the program's current pin."""
        now = self.pin(algo)
        if now is None:
            return []
        return [_owner(r) for r in self.records.values() if (r["programs"].get(ca) or {}).get("pin") == now]

    def claim(self, owner: Owner, algo: str, ca: str, pin: list[int] | None) -> None:
        rec = self.records.setdefault(owner.key, {"owner": owner.key, "command": owner.command, "pid": owner.pid, "start": owner.start, "programs": {}})
        rec["programs"][ca] = {"algo": algo, "pin": pin, "since_ns": time.time_ns()}
        self.save(owner.key)

    def drop(self, key: str, ca: str) -> None:
        rec = self.records.get(key)
        if rec and rec["programs"].pop(ca, None) is not None:
            self.save(key)

    def save(self, key: str) -> None:
        """Writes one owner's record in one rename (removed when it holds
        nothing): a killed writer leaves the old record or the new one."""
        path = RECORD_DIR / f"{key}.json"
        rec = self.records.get(key)
        with deferred_signals():
            if not rec or not rec["programs"]:
                self.records.pop(key, None)
                path.unlink(missing_ok=True)
                return
            tmp = RECORD_DIR / f".{key}.json.part"
            with open(tmp, "w") as fh:
                json.dump(rec, fh, indent=1)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)

    def let_go(self, owner: Owner, algo: str, ca: str) -> str:
        """``owner`` lets the program go (and so do owners that are gone):
        it is unloaded when it was longfat's and nobody else holds it. The
        claims go after the unload: a command killed in between leaves
        claims on a pin that is no more, never a program nobody claims."""
        held = self.holders(algo, ca)
        gone = [o for o in held if o.key == owner.key or not o.alive()]
        others = [o for o in held if o not in gone]
        if others:
            what = "left loaded: in use by " + ", ".join(map(str, others))
        elif gone:
            with deferred_signals():
                kernel_unload([algo])
            self.registered.discard(ca)
            what = "unloaded"
        else:
            what = "left loaded: not loaded by longfat" if ca in self.registered else "not loaded"
        for key in {owner.key, *(o.key for o in gone)}:
            self.drop(key, ca)  # the owner's claim also when it names a pin that is no more
        return what


def _resolve_all(names: list[str]) -> list[tuple[str, str]]:
    """Every (algorithm, kernel name) the names mean, once; a bad name fails
    before anything is done."""
    out: list[tuple[str, str]] = []
    for n in names:
        # resolve("all") says why, in a build without programs
        for pair in built() if n == "all" and built() else [resolve(n)]:
            if pair not in out:
                out.append(pair)
    return out


def load(names: list[str], log_dir: Path | str | None = None, owner: Owner | None = None) -> list[tuple[str, str]]:
    """Registers the algorithms for ``owner`` (default: this user's
    ``longfat kernel load``) and records them as its own: (kernel name,
    "loaded" | "already loaded" | "already loaded, not by longfat ...").
    A program another longfat owner loaded is shared (it stays until the
    last owner lets it go); one registered by another tool is used as it is
    and never recorded, so longfat never unloads it."""
    pairs = _resolve_all(list(names))
    owner = owner or user_owner()
    out = []
    with _locked("loading"):
        reg = _Registry()
        for algo, ca in pairs:
            if ca in reg.registered:
                if reg.holders(algo, ca):
                    reg.claim(owner, algo, ca, reg.pin(algo))
                    out.append((ca, "already loaded"))
                else:
                    out.append((ca, "already loaded, not by longfat (longfat leaves it to its owner)"))
                continue
            reg.claim(owner, algo, ca, None)  # before the pin exists: see _adopt_pending
            try:
                with deferred_signals():
                    ((_, what),) = kernel_load([algo], str(log_dir or default_log_dir()))
            except BaseException:
                reg.drop(owner.key, ca)
                raise
            if what == "loaded":
                reg.claim(owner, algo, ca, reg.pin(algo))
                reg.registered.add(ca)
            else:  # registered meanwhile by another tool
                reg.drop(owner.key, ca)
                what = "already loaded, not by longfat (longfat leaves it to its owner)"
            out.append((ca, what))
    return out


def unload(names: list[str], owner: Owner | None = None) -> list[tuple[str, str]]:
    """``owner`` (default: this user's ``longfat kernel load``) lets the
    programs go: (kernel name, "unloaded" | "not loaded" | "left loaded: in
    use by ..." | "left loaded: not loaded by longfat"). A program is
    unloaded only when longfat loaded it (a record names its pin) and no
    other owner that is still there holds it; owners whose process is gone
    count as gone."""
    pairs = _resolve_all(list(names))
    owner = owner or user_owner()
    with _locked("unloading"):
        reg = _Registry()
        return [(ca, reg.let_go(owner, algo, ca)) for algo, ca in pairs]


def release(owner: Owner) -> list[tuple[str, str]]:
    """``owner`` lets go of everything it holds (:func:`unload` of its
    programs); nothing when it holds nothing."""
    if not (RECORD_DIR / f"{owner.key}.json").exists():
        return []
    with _locked("unloading"):
        reg = _Registry()
        rec = reg.records.get(owner.key)
        held = [(c["algo"], ca) for ca, c in rec["programs"].items()] if rec else []
        return [(ca, reg.let_go(owner, algo, ca)) for algo, ca in held]


def reap() -> list[tuple[str, Owner]]:
    """Lets go of what owners whose process is gone (a SIGKILLed ``testbed
    run``) held; returns (kernel name, its owner) of what it unloaded."""
    if not any(RECORD_DIR.glob("pid*.json")):
        return []
    with _locked("unloading"):
        reg = _Registry()
        out = []
        for rec in list(reg.records.values()):
            o = _owner(rec)
            if not o.alive():
                for ca, c in list(rec["programs"].items()):
                    if reg.let_go(o, c["algo"], ca) == "unloaded":
                        out.append((ca, o))
        return out


def holders() -> dict[str, list[Owner]]:
    """Per kernel name, the owners longfat recorded for its current pin."""
    reg = _Registry(adopt=False)
    return {ca: reg.holders(algo, ca) for algo, ca in built()}


def status() -> dict:
    """{"algos": [{"algo", "ca_name", "registered", "pinned", "held_by"}],
    "available": [...], "not_built": reason | None, "pin_dir": path};
    ``held_by``: the owners longfat recorded for the current pin (none: not
    longfat's, or not loaded)."""
    s = kernel_status()
    held = holders()
    for a in s["algos"]:
        a["held_by"] = [str(o) for o in held.get(a["ca_name"], [])]
    return s


def socket_state(name: str, sock) -> dict | None:
    """The BPF glue's counters and window (``cwnd_fp``: 1/65536 packets) for a
    TCP socket of this process (or its fd) that uses the loaded algorithm
    ``name``; None when it has none (another congestion control)."""
    fd = sock if isinstance(sock, int) else sock.fileno()
    return kernel_socket_state(name, fd)


# The `longfat kernel` command (python/longfat/cli.py adds the parser).


def add_parser(sub) -> None:
    k = sub.add_parser("kernel", help="the BPF congestion controls for real Linux TCP: list, load, unload, status")
    ks = k.add_subparsers(dest="kernel_command", required=True)
    ks.add_parser("list", help="the algorithms built as BPF programs, with their kernel names")
    ld = ks.add_parser("load", help="register algorithms with the kernel as longfat_<name> (needs root); already loaded ones are left as they are")
    ld.add_argument("names", nargs="+", metavar="NAME", help="ltcp, longfat_ltcp, ... or all")
    ld.add_argument("--log-dir", help=f"where a rejected program's verifier log is written (default {default_log_dir()})")
    ul = ks.add_parser("unload", help="unregister algorithms you loaded (needs root): nothing of them stays registered or pinned, unless a running longfat command, the standing testbed or another user still uses them; never a program longfat did not load")
    ul.add_argument("names", nargs="+", metavar="NAME", help="ltcp, longfat_ltcp, ... or all")
    ks.add_parser("status", help="per algorithm: built, registered, pinned, which longfat command or user holds it; and the kernel's available list")
    k.set_defaults(func=cmd_kernel)


def cmd_kernel(args) -> int:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    err = Console(stderr=True, soft_wrap=True)
    try:
        if args.kernel_command == "list":
            rows = built()
            if not rows:
                err.print(f"no BPF programs in this build: {not_built_reason()}", style="yellow", highlight=False, markup=False)
                return 0
            t = Table(title="BPF congestion controls in this build")
            t.add_column("algorithm")
            t.add_column("kernel name")
            for algo, ca in rows:
                t.add_row(algo, ca)
            console.print(t)
        elif args.kernel_command == "load":
            for ca, outcome in load(args.names, args.log_dir):
                console.print(f"{ca}: {outcome}", highlight=False, markup=False)
        elif args.kernel_command == "unload":
            for ca, outcome in unload(args.names):
                console.print(f"{ca}: {outcome}", highlight=False, markup=False)
        elif args.kernel_command == "status":
            s = status()
            if s["not_built"]:
                err.print(f"no BPF programs in this build: {s['not_built']}", style="yellow", highlight=False, markup=False)
            else:
                t = Table(title=f"BPF congestion controls (links pinned in {s['pin_dir']})")
                for col in ("algorithm", "kernel name", "built", "registered", "pinned", "held by"):
                    t.add_column(col)
                yes = {True: "yes", False: "no"}
                for a in s["algos"]:
                    by = "; ".join(a["held_by"]) or ("not longfat's" if a["registered"] else "")
                    t.add_row(a["algo"], a["ca_name"], "yes", yes[a["registered"]], yes[a["pinned"]], by)
                console.print(t)
            console.print("kernel's available congestion controls: " + " ".join(s["available"]), highlight=False, markup=False)
    except KernelError as e:
        err.print("error: " + " ".join(str(e).split()), style="red", highlight=False, markup=False)
        return 2
    return 0
