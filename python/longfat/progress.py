"""Progress bars that also report off a terminal.

rich draws a live bar only on a terminal; under ``nohup``, in CI or with
stderr on a pipe it shows nothing, so an hour-long ``longfat reproduce``
gave no sign of life. This ``Progress`` is rich's on a terminal; off one it
writes each task's line as plain text instead: once every LOG_EVERY_S
seconds at most while it moves (the first a minute after it starts), and
when the bar stops if the task moved at all. A command that fails before
its task moves (a refused input) writes nothing but its error.
"""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.progress import BarColumn
from rich.progress import Progress as RichProgress
from rich.progress import TaskID

#: Seconds between two plain-text lines of one task off a terminal.
LOG_EVERY_S = 60.0


class Progress(RichProgress):
    """rich's Progress; off a terminal, plain lines (module text)."""

    def __init__(self, *columns: Any, console: Console | None = None, disable: bool = False, **kwargs: Any):
        console = console or Console(stderr=True)
        self._plain = not disable and not console.is_terminal
        self._logged: dict[TaskID, float] = {}
        self._said: dict[TaskID, str] = {}
        super().__init__(*columns, console=console, disable=disable or self._plain, **kwargs)

    def _line(self, task_id: TaskID) -> str:
        """The task's columns as one line of plain text (a bar as its per cent)."""
        task = self._tasks[task_id]
        parts = []
        for col in self.columns:
            if isinstance(col, BarColumn):
                if task.total:
                    parts.append(f"{100 * task.completed / task.total:3.0f} %")
                continue
            r = col(task) if callable(col) else col
            buf = io.StringIO()
            Console(file=buf, width=400, color_system=None, force_terminal=False, soft_wrap=True).print(r, end="")
            text = buf.getvalue().strip()
            if text:
                parts.append(text)
        return "  ".join(parts)

    def _log(self, task_id: TaskID, force: bool = False) -> None:
        if not self._plain or task_id not in self._tasks:
            return
        now = self.get_time()
        if force and not self._tasks[task_id].completed:
            return  # it never moved: nothing to report (an error, if any, says why)
        if not force and now - self._logged.get(task_id, now) < LOG_EVERY_S:
            return
        line = self._line(task_id)
        if force and self._said.get(task_id) == line:
            return
        self._logged[task_id] = now
        self._said[task_id] = line
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def add_task(self, *args: Any, **kwargs: Any) -> TaskID:
        task_id = super().add_task(*args, **kwargs)
        self._logged[task_id] = self.get_time()  # the first line a minute from now
        return task_id

    def update(self, task_id: TaskID, **kwargs: Any) -> None:
        super().update(task_id, **kwargs)
        self._log(task_id)

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        self._log(task_id)

    def stop(self) -> None:
        for task_id in list(self._tasks):
            self._log(task_id, force=True)
        super().stop()
