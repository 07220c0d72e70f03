"""Headless Chromium (Debian's ``chromium`` and ``chromedriver``, driven by selenium) against
the dashboard's pages (scheduler_py/dashboard/templates/, static/dashboard.js): what every
page must show once its JavaScript has run, the console errors it logged, and screenshots.

Shared by tests/test_dashboard_browser.py (an in-process brain) and
tests/cluster/test_dashboard_browser_cluster.py (the real local cluster)."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import shutil
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

WINDOW = (1280, 900)
"""the browser's viewport (px)"""
MAX_SHOT_HEIGHT = 1700
"""a screenshot shows the whole page, cut at this height (px)"""
PNG_BUDGET = 300_000
"""bytes a screenshot may take before it is reduced to a palette"""
SCREENSHOTS_ENV = "DASHBOARD_SCREENSHOTS"
"""a directory to save each page's screenshot in (docs/dashboard.md); default a tmp dir"""


def missing() -> str | None:
    """Why the browser tests cannot run here, or ``None`` when they can."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed: pip install -e '.[dev]' (or pip install selenium)"
    for program, package in (("chromium", "chromium"), ("chromedriver", "chromium-driver")):
        if shutil.which(program) is None:
            return (
                f"no `{program}` on PATH: install Debian's {package} "
                "(deploy/install-system-deps.sh does)"
            )
    return None


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium session with the browser console log kept at every level."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for argument in (
        "--headless=new",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        "--hide-scrollbars",
    ):
        options.add_argument(argument)
    if os.geteuid() == 0:  # Chromium refuses to run as root inside its own sandbox
        options.add_argument("--no-sandbox")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(
        options=options, service=Service(shutil.which("chromedriver") or "chromedriver")
    )
    driver.set_page_load_timeout(30)
    # --window-size sizes the window; the page gets exactly WINDOW
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": WINDOW[0], "height": WINDOW[1], "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        yield driver
    finally:
        driver.quit()


@contextlib.contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve the Flask ``app`` on 127.0.0.1 (a free port) in a thread; yield its base URL."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(10)


def save_png(data: bytes, path: Path) -> None:
    """Write a screenshot; one over :data:`PNG_BUDGET` bytes is reduced to 128 colours when
    Pillow is installed (it is with the ``[bench]`` extra: matplotlib)."""
    if len(data) > PNG_BUDGET:
        try:
            from PIL import Image
        except ImportError:
            pass
        else:
            with Image.open(io.BytesIO(data)) as image:
                palette = image.convert("RGB").quantize(
                    colors=128, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
                )
                out = io.BytesIO()
                palette.save(out, format="PNG", optimize=True)
                data = out.getvalue()
    path.write_bytes(data)


def screenshot_dir(default: Path) -> Path:
    """``$DASHBOARD_SCREENSHOTS`` when set (created), else ``default``."""
    chosen = Path(os.environ.get(SCREENSHOTS_ENV) or default)
    chosen.mkdir(parents=True, exist_ok=True)
    return chosen


@dataclass
class Visit:
    """One browser session over the dashboard at ``base``: loads pages, waits for what they
    must show, collects console errors per page and saves screenshots into ``shots``."""

    driver: Any
    base: str
    shots: Path
    timeout: float = 20.0
    errors: dict[str, list[str]] = field(default_factory=dict)

    # -- plumbing -------------------------------------------------------------------
    def open(self, page: str, path: str) -> None:
        self.driver.get(self.base + path)
        self.wait(lambda: self.js("return document.readyState") == "complete", "the page loaded")

    def wait(self, condition: Callable[[], Any], what: str) -> Any:
        from selenium.common.exceptions import TimeoutException
        from selenium.webdriver.support.ui import WebDriverWait

        try:
            return WebDriverWait(self.driver, self.timeout, poll_frequency=0.2).until(
                lambda _: condition()
            )
        except TimeoutException:
            raise AssertionError(
                f"{self.driver.current_url}: timed out after {self.timeout:.0f}s waiting for "
                f"{what}; the page shows:\n{self.text('main')}\nconsole: {self.console()}"
            ) from None

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def text(self, selector: str) -> str:
        return self.js(
            "const e = document.querySelector(arguments[0]); return e ? e.innerText : ''", selector
        )

    def rows(self, table: str) -> list[list[str]]:
        return self.js(
            "return [...document.querySelectorAll(`#${arguments[0]} tbody tr`)]"
            ".map(r => [...r.cells].map(c => c.innerText));",
            table,
        )

    def painted(self, canvas: str) -> int:
        """How many pixels of the canvas ``#canvas`` are not transparent."""
        return self.js(
            "const c = document.getElementById(arguments[0]);"
            "if (!c || !c.width || !c.height) return 0;"
            "const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
            "let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n;",
            canvas,
        )

    def console(self) -> list[str]:
        """The console entries logged since the last call (chromedriver clears them)."""
        return [f"{e['level']} {e['message']}" for e in self.driver.get_log("browser")]

    def finish(self, page: str) -> None:
        """Save ``page``'s screenshot and keep its SEVERE console entries."""
        height = min(MAX_SHOT_HEIGHT, self.js("return document.documentElement.scrollHeight"))
        shot = self.driver.execute_cdp_cmd(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": WINDOW[0], "height": height, "scale": 1},
            },
        )
        save_png(base64.b64decode(shot["data"]), self.shots / f"{page}.png")
        self.errors[page] = [entry for entry in self.console() if entry.startswith("SEVERE")]

    # -- the pages ------------------------------------------------------------------
    def cluster(self, supervisors: int, topology: str) -> list[list[str]]:
        """The Cluster page: a row per supervisor, the CPU chart drawn, ``topology`` listed
        with a link to its page, the brain's health; returns the supervisors' rows."""
        self.open("cluster", "/")
        self.wait(
            lambda: len(self.rows("supervisors")) == supervisors, f"{supervisors} supervisors"
        )
        self.wait(lambda: any(r[0] == topology for r in self.rows("topologies")), topology)
        self.wait(lambda: self.painted("cpu-chart") > 0, "the CPU chart drawn")
        assert self.text("#health") == "brain: ok", self.text("#health")
        assert "last round" in self.text("#brain")
        href = self.js("return document.querySelector('#topologies tbody a').pathname")
        assert href == f"/topology/{topology}", href
        rows = self.rows("supervisors")
        self.finish("cluster")
        return rows

    def topology(self, name: str, executors: int) -> dict[str, Any]:
        """The Topology page of ``name``: a row and a graph node per executor, nested in
        worker and host nodes, traffic edges, the heatmap drawn; returns what it shows."""
        self.open("topology", f"/topology/{name}")
        self.wait(lambda: len(self.rows("executors")) == executors, f"{executors} executor rows")
        graph = self.wait(
            lambda: self.js(
                "const reg = document.getElementById('graph')._cyreg;"
                "if (!reg || !reg.cy || !reg.cy.nodes().length) return null;"
                "const cy = reg.cy, ids = cy.nodes().map(n => n.id());"
                "return {executors: ids.filter(i => i.startsWith('e:')).length,"
                " workers: ids.filter(i => i.startsWith('w:')).length,"
                " hosts: ids.filter(i => i.startsWith('h:')).length, edges: cy.edges().length,"
                " nested: cy.nodes().filter(n => n.id().startsWith('e:') && n.parent().length)"
                "  .length};"
            ),
            "the placement graph",
        )
        self.wait(lambda: self.painted("heatmap") > 0, "the traffic heatmap drawn")
        shown = {
            "summary": self.text("#summary"),
            "rows": self.rows("executors"),
            "graph": graph,
            "graph_painted": self.js(
                "return [...document.querySelectorAll('#graph canvas')].some(c => c.width > 0)"
            ),
        }
        self.finish("topology")
        return shown

    def decisions(self, expect: str) -> list[str]:
        """The Decisions page: timeline entries, one of them containing ``expect``."""
        self.open("decisions", "/decisions")
        self.wait(
            lambda: any(expect in item for item in self.timeline("timeline")),
            f"a timeline entry with {expect!r}",
        )
        items = self.timeline("timeline")
        self.finish("decisions")
        return items

    def trigger(self) -> dict[str, Any]:
        """The Decisions page's automatic-trigger line, its pause/resume button (label, action,
        enabled), whether its token field takes input, and the note beside the button (the
        answer to the last click, or why the dashboard is read-only)."""
        return self.js(
            "const b = document.getElementById('trigger-toggle'),"
            " t = document.getElementById('trigger-token');"
            "return {line: document.getElementById('trigger-line').innerText,"
            " button: b.innerText, action: b.dataset.action, enabled: !b.disabled,"
            " token_enabled: !t.disabled,"
            " note: document.getElementById('trigger-status').innerText};"
        )

    def open_trigger(self) -> dict[str, Any]:
        """Load the Decisions page and wait for the trigger's state read from the brain."""
        self.open("decisions", "/decisions")
        self.wait(
            lambda: self.text("#trigger-line").startswith("automatic trigger:"),
            "the trigger's state from the brain's status",
        )
        return self.trigger()

    def toggle_trigger(self, token: str) -> dict[str, Any]:
        """Type ``token`` and click the Decisions page's pause/resume button; wait for the
        answer beside it; returns :meth:`trigger`."""
        from selenium.webdriver.common.by import By

        field_ = self.driver.find_element(By.ID, "trigger-token")
        field_.clear()
        field_.send_keys(token)
        self.driver.find_element(By.ID, "trigger-toggle").click()
        self.wait(
            lambda: (note := self.trigger()["note"]) and "…" not in note,
            "the brain's answer to the pause/resume click",
        )
        return self.trigger()

    def requests_on_click(self, button: str) -> list[str]:
        """Click the (perhaps disabled) ``#button`` and return the URLs the page fetched in the
        click's handler (a handler calls ``fetch`` before it returns to the event loop)."""
        from selenium.webdriver.common.by import By

        self.js(
            "window.__fetched = []; const original = window.fetch;"
            "window.fetch = (...a) => { window.__fetched.push(String(a[0]));"
            " return original(...a); };"
        )
        self.driver.find_element(By.ID, button).click()
        return self.js("return window.__fetched")

    def timeline(self, list_id: str) -> list[str]:
        return self.js(
            "return [...document.querySelectorAll(`#${arguments[0]} li`)].map(l => l.innerText)",
            list_id,
        )

    def whatif(self, topology: str, algorithm: str, params: str = "{}") -> dict[str, Any]:
        """The What-if page: choose ``topology`` and ``algorithm``, run a dry run, wait for the
        comparison with the running placement; returns the comparison ``{row label: [running,
        dry run]}``, the status line, the moves line, both placements and the API's answer
        the page shows them from."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select

        self.open("whatif", "/whatif")
        self.wait(
            lambda: (
                topology in self.options("wf-topology")
                and algorithm in self.options("wf-algorithm")
            ),
            f"{topology} and {algorithm} to choose from",
        )
        Select(self.driver.find_element(By.ID, "wf-topology")).select_by_value(topology)
        Select(self.driver.find_element(By.ID, "wf-algorithm")).select_by_value(algorithm)
        field_ = self.driver.find_element(By.ID, "wf-params")
        field_.clear()
        field_.send_keys(params)
        self.driver.find_element(By.CSS_SELECTOR, "#whatif-form button[type=submit]").click()
        self.wait(lambda: len(self.rows("wf-compare")) > 0, "the dry run beside the running plan")
        compare = {r[0]: r[1:] for r in self.rows("wf-compare")}
        shown = {
            "compare": compare,
            "status": self.text("#wf-status"),
            "moved": self.text("#wf-moved"),
            "running": self.placement("wf-running"),
            "proposed": self.placement("wf-proposal"),
            "answer": json.loads(self.js("return document.getElementById('wf-json').textContent")),
        }
        self.finish("whatif")
        return shown

    def apply(self, topology: str, algorithm: str, token: str, until: str) -> dict[str, Any]:
        """The What-if page's *Apply* with ``token``: waits until the status line answers
        and, when the brain accepted, until the progress shows a state ``until``; returns
        the status line and the progress entries."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select

        self.open("whatif", "/whatif")
        self.wait(lambda: topology in self.options("wf-topology"), f"{topology} to choose from")
        Select(self.driver.find_element(By.ID, "wf-topology")).select_by_value(topology)
        Select(self.driver.find_element(By.ID, "wf-algorithm")).select_by_value(algorithm)
        self.driver.find_element(By.ID, "wf-token").send_keys(token)
        self.driver.find_element(By.ID, "wf-apply").click()
        status = self.wait(
            lambda: (line := self.text("#wf-status")) and "…" not in line and line,
            "the brain's answer to the apply",
        )
        if self.js("return document.getElementById('wf-status').className") == "ok":
            self.wait(
                lambda: any(until in item for item in self.timeline("wf-progress")),
                f"the reconfiguration's progress to reach {until!r}",
            )
        return {"status": status, "progress": self.timeline("wf-progress")}

    def placement(self, box: str) -> dict[str, list[str]]:
        """A what-if placement table: worker → its executors (sorted)."""
        return self.js(
            "const out = {};"
            "for (const r of document.querySelectorAll(`#${arguments[0]} tbody tr`))"
            " out[r.cells[0].innerText] = [...r.cells[1].querySelectorAll('.exec')]"
            ".map(e => e.innerText).sort(); return out;",
            box,
        )

    def options(self, select: str) -> list[str]:
        return self.js(
            "return [...document.getElementById(arguments[0]).options].map(o => o.value)", select
        )

    def algorithms(self, names: list[str]) -> list[list[str]]:
        """The Algorithms page: one row per algorithm of the registry."""
        self.open("algorithms", "/algorithms")
        self.wait(lambda: len(self.rows("algorithms")) == len(names), f"{len(names)} algorithms")
        rows = self.rows("algorithms")
        assert [r[0] for r in rows] == names
        self.finish("algorithms")
        return rows


def number(cell: str) -> float:
    """The number a cell starts with (``"1.53 (66.7 % of all)"`` → 1.53)."""
    return float(cell.split()[0])


def check_whatif(shown: Mapping[str, Any], running_algorithm: str, algorithm: str) -> None:
    """The What-if page shows the brain's dry run as its answer has it: the numbers (to the
    page's 3 significant digits), the moves and both placements."""
    answer = shown["answer"]
    assert answer["dry_run"] is True, answer
    proposal = answer["proposal"]
    compare = shown["compare"]
    assert compare["algorithm"] == [running_algorithm, algorithm], compare
    assert compare["workers used"] == [
        str(proposal["workers_before"]),
        str(proposal["workers_after"]),
    ]
    for label, before, after in (
        ("inter-worker traffic", "interworker_before", "interworker_after"),
        ("max host CPU utilisation", "max_node_utilisation_before", "max_node_utilisation_after"),
    ):
        scale = 100 if "utilisation" in label else 1
        shown_before, shown_after = (number(x) for x in compare[label])
        assert shown_before == pytest.approx(scale * proposal[before], rel=5e-3, abs=1e-9), label
        assert shown_after == pytest.approx(scale * proposal[after], rel=5e-3, abs=1e-9), label
    gain = number(compare["predicted gain (inter-worker traffic)"][1])
    assert gain == pytest.approx(proposal["predicted_gain"], rel=5e-3, abs=1e-9)
    rates = compare.get("predicted throughput (spout tuples/s)")
    if proposal.get("objective") == "throughput":  # judged on the model's rate: both shown
        assert rates is not None, compare
        keys = ("predicted_throughput_before", "predicted_throughput_after")
        for cell, key in zip(rates, keys, strict=True):
            assert number(cell) == pytest.approx(proposal[key], rel=5e-3), (key, rates)
        assert compare["bottleneck"] == [
            proposal["bottleneck_before"],
            proposal["bottleneck_after"],
        ]
    else:
        assert rates is None, compare
    moves = proposal["moves"]
    moved = [m for m in moves if m["from"] != m["to"]]
    assert shown["moved"].startswith(f"{len(moved)} of {len(moves)} executors move"), shown
    assert shown["running"] == by_slot(moves, "from")
    assert shown["proposed"] == by_slot(moves, "to")


def by_slot(moves: list[Mapping[str, Any]], side: str) -> dict[str, list[str]]:
    """``worker → sorted "executor (tasks)"`` of a dry run's moves, on ``side`` from or to."""
    slots: dict[str, list[str]] = {}
    for move in moves:
        slots.setdefault(move[side] or "(not placed)", []).append(
            f"{move['executor']} ({move['tasks']})"
        )
    return {slot: sorted(executors) for slot, executors in slots.items()}


def log_in(driver: Any, base: str, token: str, timeout: float = 20.0) -> None:
    """Log the browser in at ``base``/login with ``token`` (a dashboard started with
    ``--require-token``, scheduler_py/dashboard/access.py): its session cookie then reads
    every page and the API."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(base + "/login")
    driver.find_element(By.ID, "login-token").send_keys(token)
    driver.find_element(By.ID, "login-submit").click()
    WebDriverWait(driver, timeout, poll_frequency=0.2).until(
        lambda _: (
            not driver.current_url.split("?")[0].endswith("/login")
            and driver.execute_script("return document.readyState") == "complete"
        )
    )
    assert driver.get_cookie("scheduler_py_session"), (
        f"no session cookie after logging in at {base}/login; the page shows "
        f"{driver.find_element(By.TAG_NAME, 'body').text[:300]!r}"
    )
