"""The kernel path's BPF congestion controls: list, load, unload, status.

The loader is Rust (crates/longfat-kernel/src/programs.rs, through
``longfat._native``): loading registers an algorithm with the kernel as
``longfat_<name>`` and pins its link under /sys/fs/bpf/longfat, so it stays
selectable with ``setsockopt(TCP_CONGESTION)`` or ``iperf3 -C`` after this
process exits; unloading removes it. A name may be the algorithm's
(``ltcp``), the kernel's (``longfat_ltcp``) or ``all``.

Every failure is a :class:`KernelError` with a one-line message.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

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

__all__ = [
    "KernelError",
    "built",
    "default_log_dir",
    "load",
    "not_built_reason",
    "resolve",
    "socket_state",
    "status",
    "unload",
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


def load(names: list[str], log_dir: Path | str | None = None) -> list[tuple[str, str]]:
    """Registers the algorithms (idempotent): (kernel name, "loaded" | "already loaded")."""
    return [tuple(x) for x in kernel_load(list(names), str(log_dir or default_log_dir()))]


def unload(names: list[str]) -> list[tuple[str, str]]:
    """Unregisters them: (kernel name, "unloaded" | "not loaded")."""
    return [tuple(x) for x in kernel_unload(list(names))]


def status() -> dict:
    """{"algos": [{"algo", "ca_name", "registered", "pinned"}], "available": [...],
    "not_built": reason | None, "pin_dir": path}"""
    return kernel_status()


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
    ul = ks.add_parser("unload", help="unregister algorithms (needs root): nothing of them stays registered or pinned")
    ul.add_argument("names", nargs="+", metavar="NAME", help="ltcp, longfat_ltcp, ... or all")
    ks.add_parser("status", help="per algorithm: built, registered, pinned; and the kernel's available list")
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
                for col in ("algorithm", "kernel name", "built", "registered", "pinned"):
                    t.add_column(col)
                yes = {True: "yes", False: "no"}
                for a in s["algos"]:
                    t.add_row(a["algo"], a["ca_name"], "yes", yes[a["registered"]], yes[a["pinned"]])
                console.print(t)
            console.print("kernel's available congestion controls: " + " ".join(s["available"]), highlight=False, markup=False)
    except KernelError as e:
        err.print("error: " + " ".join(str(e).split()), style="red", highlight=False, markup=False)
        return 2
    return 0
