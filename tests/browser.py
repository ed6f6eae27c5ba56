"""Opening an HTML file longfat wrote in a real browser: headless Chromium
(Debian's ``chromium`` package) driven by Playwright, to check that the page
renders: no console errors, no script errors, no failed or outside
requests, every table laid out, every image loaded and decoded, and a
full-page screenshot that is not blank.

Playwright's own browser download is never used: the system's Chromium is
launched by path (``$LONGFAT_CHROMIUM``, else ``/usr/bin/chromium``, else
``chromium`` on PATH). Without a browser (or without Playwright) a test
calling ``require_browser()`` is skipped, unless ``LONGFAT_REQUIRE_BROWSER``
is set (as scripts/test.sh does for CI): then it fails.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

#: Setting this makes a missing browser a failure instead of a skip.
REQUIRE_ENV = "LONGFAT_REQUIRE_BROWSER"

#: Chromium's switches: headless, no sandbox (CI runs as root), and nothing
#: that talks to the network on its own.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Requests a self-contained page must not make (they are refused, and reported).
_OUTSIDE = re.compile(r"^(https?|wss?|ftp)://", re.IGNORECASE)


def chromium_path() -> str | None:
    """The Chromium executable to use, or None if there is none."""
    env = os.environ.get("LONGFAT_CHROMIUM")
    if env:
        return env if os.access(env, os.X_OK) else None
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    return shutil.which("chromium")


def require_browser() -> str:
    """The Chromium path, with Playwright importable; otherwise skips the
    calling test, or fails it when ``LONGFAT_REQUIRE_BROWSER`` is set."""
    missing = []
    exe = chromium_path()
    if exe is None:
        missing.append("no Chromium (apt-get install chromium, or set LONGFAT_CHROMIUM)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("no Playwright for Python (pip install playwright; never `playwright install`)")
    if missing:
        why = "; ".join(missing)
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(f"{REQUIRE_ENV} is set but the browser check cannot run: {why}", pytrace=False)
        pytest.skip(f"browser check skipped: {why}")
    return exe


def _screenshot_facts(path: Path) -> dict:
    """Size and colour spread of a PNG, decoded (matplotlib reads it)."""
    import matplotlib.image
    import numpy as np

    px = matplotlib.image.imread(path)
    flat = (np.asarray(px)[..., :3] * 255).round().astype(np.uint8).reshape(-1, 3)
    colors = len(np.unique(flat[:: max(len(flat) // 200_000, 1)], axis=0))
    return {"path": str(path), "width": int(px.shape[1]), "height": int(px.shape[0]), "colors": int(colors), "bytes": path.stat().st_size}


_IMAGES_JS = """async () => Promise.all([...document.images].map(async (img) => {
    let decoded = true, error = "";
    try { await img.decode(); } catch (e) { decoded = false; error = String(e); }
    const r = img.getBoundingClientRect();
    const src = img.getAttribute("src") || "";
    return {src: src.length > 80 ? src.slice(0, 80) + "..." : src, complete: img.complete,
            naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight,
            width: r.width, height: r.height, top: r.top + window.scrollY, figure: img.closest("figure")?.id || "", decoded, error};
}))"""

_TABLES_JS = """() => [...document.querySelectorAll("table")].map((t) => {
    const r = t.getBoundingClientRect();
    return {rows: t.rows.length, cells: t.querySelectorAll("td, th").length, width: r.width, height: r.height, top: r.top + window.scrollY, id: t.id};
})"""


def check_page(html_path: str | Path, screenshot_path: str | Path, *, width: int = 1280, timeout_s: float = 60) -> dict:
    """Loads ``html_path`` (file://) in headless Chromium, waits for the
    load event, and returns what it saw:

    - ``console_errors``: console messages of type error;
    - ``page_errors``: uncaught script exceptions;
    - ``failed_requests``: requests that failed (a missing file, ...);
    - ``outside_requests``: requests off the machine (http, ws, ...), all refused;
    - ``tables``: per table, rows, cells, laid-out size, top (px from the page's top) and id;
    - ``images``: per <img>, complete, naturalWidth/Height, laid-out size and top, the id
      of the <figure> it is in ("" if none), decoded (``img.decode()``);
    - ``screenshot``: the full-page PNG at ``screenshot_path``, decoded: size, colours;
    - ``title``, ``text_length``;
    - ``problems``: one line per thing wrong (empty when the page is fine).
    """
    exe = require_browser()
    from playwright.sync_api import sync_playwright

    html_path = Path(html_path).resolve()
    screenshot_path = Path(screenshot_path)
    seen: dict = {"console_errors": [], "page_errors": [], "failed_requests": [], "outside_requests": []}

    def refuse(route) -> None:
        seen["outside_requests"].append(route.request.url)
        route.abort()

    with sync_playwright() as pw, tempfile.TemporaryDirectory(prefix="longfat-chromium-") as profile:
        ctx = pw.chromium.launch_persistent_context(
            profile,
            executable_path=exe,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": width, "height": 900},
            timeout=timeout_s * 1000,
        )
        try:
            ctx.set_default_timeout(timeout_s * 1000)
            ctx.route(_OUTSIDE, refuse)
            page = ctx.new_page()
            page.on("console", lambda m: seen["console_errors"].append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: seen["page_errors"].append(str(e)))
            page.on("requestfailed", lambda r: seen["failed_requests"].append(f"{r.url[:200]}: {r.failure}"))
            page.goto(html_path.as_uri(), wait_until="load")
            images = page.evaluate(_IMAGES_JS)
            tables = page.evaluate(_TABLES_JS)
            title = page.title()
            text_length = page.evaluate("() => document.body ? document.body.innerText.length : 0")
            page.screenshot(path=str(screenshot_path), full_page=True)
        finally:
            ctx.close()
    shot = _screenshot_facts(screenshot_path)
    problems = [f"console error: {m}" for m in seen["console_errors"]]
    problems += [f"script error: {m}" for m in seen["page_errors"]]
    problems += [f"failed request: {m}" for m in seen["failed_requests"]]
    problems += [f"outside request (refused): {u}" for u in seen["outside_requests"]]
    for i, img in enumerate(images):
        if not (img["complete"] and img["naturalWidth"] > 0 and img["naturalHeight"] > 0 and img["decoded"]):
            problems.append(f"image {i} ({img['src']!r}) not loaded and decoded: {img}")
    for i, t in enumerate(tables):
        if t["rows"] == 0 or t["width"] <= 0 or t["height"] <= 0:
            problems.append(f"table {i} is empty or not laid out: {t}")
    if shot["colors"] < 2 or shot["width"] < 100 or shot["height"] < 100:
        problems.append(f"screenshot is blank or tiny: {shot}")
    return {"title": title, "text_length": text_length, "tables": tables, "images": images, "screenshot": shot, **seen, "problems": problems}
