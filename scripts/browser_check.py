"""Open every page of the built book in headless Chromium and check what a reader would see.

    python scripts/browser_check.py [_build/html] [--screenshots _build/screenshots]

Serves the HTML folder on a loopback port, loads each page, and reports:
- images that failed to load (naturalWidth 0) and links inside the book that point nowhere;
- cell outputs that carry an error or a traceback;
- math that MathJax left unrendered (offline: MathJax must be served by the book itself);
- MyST markup left raw in the text (``{glue:md}``, ``{cite}``, ``{doc}``, ``:format: myst``...),
  outside the code of code cells.
A screenshot of each page is written to the screenshots folder. Exit code 1 on any problem.

Needs Debian's ``chromium`` and ``chromium-driver`` (``scripts/install-browser.sh``).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import re
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urldefrag, urlparse

if TYPE_CHECKING:
    from selenium import webdriver

CHROME_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
    "--window-size=1280,1600",
]

#: MyST markup that should never reach a reader: a role or directive name in braces, or a
#: directive option line (JavaScript regular expression)
RAW_MYST = (
    r"/\{(?:glue(?::\w+)?|cite(?::\w+)?|doc|ref|numref|eq|term|download|math|code-cell)\}"
    r"|:format: *myst/g"
)

PAGE_PROBE = (
    "const RAW_MYST = "
    + RAW_MYST
    + ";\n"
    + """
const imgs = Array.from(document.images).filter(i => !i.src.startsWith('data:'));
const broken = imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src);
const errs = Array.from(document.querySelectorAll(
  '.output.error, .output.traceback, div.output.stderr, .cell_output .stderr'
)).map(e => e.textContent.trim().slice(0, 300));
const mathSrc = document.querySelectorAll('.math, span.math, div.math').length;
const mathDone = document.querySelectorAll('mjx-container').length;
const raw = Array.from(document.querySelectorAll('.math')).filter(
  e => !e.querySelector('mjx-container') && /\\\\\\(|\\\\\\[|\\$/.test(e.textContent)).length;
const main = (document.querySelector('main, article, [role=main]')
              || document.body).cloneNode(true);
main.querySelectorAll(
  '.cell_input, .jp-CodeCell .jp-InputArea, script, style, code.docutils.literal'
).forEach(e => e.remove());  // an inline literal (``{cite}``) names markup on purpose
const roles = Array.from(main.textContent.matchAll(RAW_MYST)).map(m => m[0]);
return {broken: broken, errors: errs, math: mathSrc, rendered: mathDone, raw: raw,
        images: imgs.length, roles: roles};
"""
)


def internal_link_problems(root: Path) -> list[str]:
    """Relative href/src in the HTML files that point to a missing file."""
    problems = []
    for page in sorted(root.rglob("*.html")):
        if {"_static", "_sources"} & set(page.relative_to(root).parts):
            continue  # theme templates, not pages
        text = page.read_text(errors="replace")
        for target in re.findall(r'(?:href|src)="([^"#?][^"]*)"', text):
            url = urlparse(target)
            if url.scheme or target.startswith(("//", "mailto:", "javascript:")):
                continue
            path = unquote(urldefrag(url.path)[0])
            if not path:
                continue
            dest = (page.parent / path).resolve()
            if not dest.exists():
                problems.append(f"{page.relative_to(root)}: broken link {target}")
    return problems


def serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/"


def driver(profile: str) -> webdriver.Chrome:
    """Headless Chromium keeping its profile in the folder ``profile``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = shutil.which("chromedriver")
    if not chrome or not chromedriver:
        raise SystemExit(
            "Chromium and ChromeDriver are needed: run scripts/install-browser.sh "
            "(Debian packages chromium and chromium-driver)."
        )
    opts = webdriver.ChromeOptions()
    opts.binary_location = chrome
    for flag in CHROME_FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={profile}")
    return webdriver.Chrome(service=Service(executable_path=chromedriver), options=opts)


def check(root: Path, shots: Path, pages: list[str] | None = None) -> list[str]:
    root = root.resolve()
    shots.mkdir(parents=True, exist_ok=True)
    problems = internal_link_problems(root)
    files = pages or sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.html")
        if not p.name.startswith(("genindex", "search", "py-modindex"))
        and "_static" not in p.parts
        and "_sources" not in p.parts
    )
    httpd, base = serve(root)
    # the browser profile (about 18 MB) is removed when the check ends
    profile = tempfile.TemporaryDirectory(prefix="chromium-", ignore_cleanup_errors=True)
    browser = driver(profile.name)
    try:
        for rel in files:
            browser.get(base + rel)
            deadline = time.time() + 20
            while True:  # wait for MathJax to typeset (it runs after load)
                r = browser.execute_script(PAGE_PROBE)
                if r["rendered"] >= r["math"] or time.time() > deadline:
                    break
                time.sleep(0.3)
            for src in r["broken"]:
                problems.append(f"{rel}: image did not load: {src}")
            for e in r["errors"]:
                problems.append(f"{rel}: error output in a cell: {e!r}")
            for role in sorted(set(r["roles"])):
                problems.append(f"{rel}: MyST markup left raw: {role!r}")
            if r["math"] and r["rendered"] == 0:
                problems.append(f"{rel}: {r['math']} math element(s) not rendered by MathJax")
            browser.save_screenshot(
                str(shots / (rel.replace("/", "__").removesuffix(".html") + ".png"))
            )
            print(f"{rel}: {r['images']} images, {r['rendered']}/{r['math']} math rendered")
    finally:
        browser.quit()
        httpd.shutdown()
        profile.cleanup()
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html", nargs="?", default="_build/html")
    ap.add_argument("--screenshots", default=None, help="default: <html>/../screenshots")
    args = ap.parse_args(argv)
    root = Path(args.html)
    if not (root / "index.html").exists():
        print(f"no built book at {root}; run 'make book' first", file=sys.stderr)
        return 2
    shots = Path(args.screenshots) if args.screenshots else root.parent / "screenshots"
    problems = check(root, shots)
    for p in problems:
        print("PROBLEM", p)
    print(f"{len(problems)} problem(s); screenshots in {shots}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
