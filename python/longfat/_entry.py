"""The ``longfat`` command's entry point: takes over the terminating
signals before anything heavy is imported (numpy, pyarrow, the engine: about
half a second), so that a Ctrl-C in those first moments ends the command
quietly with 128 + the signal's number, as it does later, instead of a
Python traceback from inside an import."""

import signal
import sys


class _EarlyExit(SystemExit):
    pass


def _early(signum: int, _frame) -> None:
    raise _EarlyExit(128 + signum)


def main() -> int:
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(s) != signal.SIG_IGN:
            signal.signal(s, _early)
    try:
        from longfat.cli import main as cli_main
    except _EarlyExit as e:
        sys.stderr.write("interrupted: no results written\n")
        return int(e.code)
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
