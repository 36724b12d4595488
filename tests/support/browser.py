"""Check an HTML page in headless Chromium, spoken to over the DevTools Protocol.

The browser runs with --remote-debugging-pipe: commands go to it on fd 3 and
its answers and events come back on fd 4, each a JSON message ended by a NUL
byte, so no websocket client is needed.
"""
import base64
import contextlib
import json
import os
import queue
import shutil
import signal
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# What counts as drawn inside a figure's svg.
DRAWN = "path,polyline,polygon,line,rect,circle,text"

FIGURES_JS = """(() => Array.from(document.querySelectorAll('figure')).map(f => {
  const svg = f.querySelector('svg');
  const box = svg ? svg.getBoundingClientRect() : null;
  const title = svg ? svg.querySelector('title') : null;
  const cap = f.querySelector('figcaption');
  return {id: f.id || null, svg: !!svg,
          width: box ? box.width : 0, height: box ? box.height : 0,
          drawn: svg ? svg.querySelectorAll('%s').length : 0,
          title: title ? title.textContent.trim() : null,
          caption: cap ? cap.textContent.trim() : null};
}))()""" % DRAWN


class BrowserError(RuntimeError):
    pass


class PhaseTimeout(BrowserError):
    def __init__(self, phase, seconds):
        super().__init__(f"browser phase '{phase}' timed out after {seconds:.0f} s")
        self.phase = phase


@dataclass
class PageCheck:
    console_errors: list[str]
    external_requests: list[str]
    figures: list[dict]
    screenshot: Path
    blank: bool
    title: str
    inline_requests: list[str] = field(default_factory=list)  # data: URLs: inside the page, not fetched


def output_dir():
    """Where tests keep their screenshots: $FABRICLAB_TEST_OUTPUT, else build/test-output."""
    repo = Path(__file__).resolve().parents[2]
    out = Path(os.environ.get("FABRICLAB_TEST_OUTPUT") or repo / "build" / "test-output")
    out.mkdir(parents=True, exist_ok=True)
    return out


def find_chromium():
    """The browser to run: $FABRICLAB_CHROMIUM, else chromium or chromium-browser on PATH."""
    exe = (os.environ.get("FABRICLAB_CHROMIUM")
           or shutil.which("chromium") or shutil.which("chromium-browser"))
    if not exe:
        raise BrowserError("no browser: install Debian's chromium (make debs) or set FABRICLAB_CHROMIUM")
    return exe


class Browser:
    """One headless Chromium in its own process group; usable for several checks, then close()."""

    def __init__(self, timeout=60, exe=None):
        exe = exe or find_chromium()
        self.tmp = tempfile.mkdtemp(prefix="fabriclab-chromium-")
        cmd_r, self._cmd_w = os.pipe()   # commands: the browser reads them as its fd 3
        self._msg_r, msg_w = os.pipe()   # messages: the browser writes them as its fd 4
        log = os.open(os.path.join(self.tmp, "stderr.log"), os.O_WRONLY | os.O_CREAT, 0o600)
        argv = [exe, "--headless", "--no-sandbox", "--disable-gpu",
                f"--user-data-dir={self.tmp}/profile", "--remote-debugging-pipe",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-dev-shm-usage", "--hide-scrollbars",
                "--window-size=1280,800", "about:blank"]
        # Crash reports go to $XDG_CONFIG_HOME: keep them in the temporary directory too.
        env = {**os.environ, "XDG_CONFIG_HOME": self.tmp, "XDG_CACHE_HOME": self.tmp}
        # posix_spawn rather than Popen: Popen's pass_fds keeps descriptors under their own
        # numbers, and Chromium insists on 3 and 4. setsid gives it its own process group.
        try:
            self.pid = os.posix_spawnp(argv[0], argv, env, setsid=True, file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, log, 1), (os.POSIX_SPAWN_DUP2, log, 2),
                (os.POSIX_SPAWN_DUP2, cmd_r, 3), (os.POSIX_SPAWN_DUP2, msg_w, 4)])
        except OSError as e:
            os.close(self._cmd_w)
            os.close(self._msg_r)
            shutil.rmtree(self.tmp)
            raise BrowserError(f"phase 'start': cannot run {exe}: {e}") from None
        finally:
            for fd in (cmd_r, msg_w, log):
                os.close(fd)
        self._next_id = 0
        self._inbox = queue.Queue()
        self.events = []
        threading.Thread(target=self._read, daemon=True).start()
        try:
            self.call("Browser.getVersion", phase="start", timeout=timeout)
        except BaseException:
            self.close()
            raise

    def _read(self):
        buf = bytearray()  # screenshots come as messages of megabytes, in many reads
        try:
            while chunk := os.read(self._msg_r, 1 << 20):
                buf += chunk
                if b"\0" in chunk:
                    *msgs, rest = buf.split(b"\0")
                    for m in msgs:
                        self._inbox.put(json.loads(m))
                    buf = bytearray(rest)
        except OSError:  # the descriptor was closed under us
            pass
        self._inbox.put(None)

    def call(self, method, params=None, session=None, phase="", timeout=60):
        """Send one command and return its result; events met on the way go to self.events."""
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self._cmd_w, data):]
        except OSError as e:
            raise BrowserError(f"phase '{phase}': cannot send {method}: {e}") from None
        return self.wait(lambda m: m.get("id") == self._next_id, phase, timeout, f"{method}: ")["result"]

    def wait(self, match, phase, timeout, what=""):
        """The first message `match` accepts, keeping events; PhaseTimeout after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                m = self._inbox.get(timeout=max(left, 0))
            except queue.Empty:
                raise PhaseTimeout(phase, timeout) from None
            if m is None:
                self._inbox.put(None)  # for whoever waits next
                raise BrowserError(f"browser exited in phase '{phase}'{self._stderr_tail()}")
            if "method" in m:
                self.events.append(m)
            if match(m):
                if "error" in m:
                    raise BrowserError(f"phase '{phase}': {what}{m['error'].get('message')}")
                return m

    def _stderr_tail(self):
        try:
            return "\n" + Path(self.tmp, "stderr.log").read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def close(self):
        """Ask the browser to quit, then kill its process group: nothing of it survives."""
        if self.pid is None:
            return
        try:  # a browser that quits reaps its own children; killed ones are left as zombies
            self.call("Browser.close", phase="close", timeout=2)
            self.wait(lambda m: False, "close", 1)  # until the pipe closes
        except BrowserError:
            pass
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        # Crashpad handlers start sessions of their own; they carry the directory in their arguments.
        deadline = time.monotonic() + 5
        while (left := processes(self.pid, self.tmp)) and time.monotonic() < deadline:
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)
        self.pid = None
        for fd in (self._cmd_w, self._msg_r):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def processes(pgid, text):
    """Live processes in process group pgid or with `text` in their command line."""
    found = []
    for d in Path("/proc").iterdir():
        try:
            stat = (d / "stat").read_text()
            cmdline = (d / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        state, _, group = stat[stat.rindex(")") + 2:].split()[:3]  # the name in () may hold spaces
        if state not in "ZX" and (int(group) == pgid or text.encode() in cmdline):
            found.append(int(d.name))
    return found


def is_blank(png, share=0.999):
    """True when nearly every pixel has the most common colour.

    Plots of thin lines on white cover little: a page with one small figure and a heading
    has 0.3% of its pixels drawn, hence a threshold this close to 1.
    """
    import matplotlib.image
    img = matplotlib.image.imread(png)  # floats in [0, 1], one column per channel
    px = (img.reshape(-1, img.shape[-1]) * 255).round().astype(np.uint32)
    colours = px @ (np.uint32(1) << np.arange(0, 8 * px.shape[1], 8, dtype=np.uint32))
    _, counts = np.unique(colours, return_counts=True)
    return bool(counts.max() >= share * len(colours))


def _events_for(session, events):
    for e in events:
        if e.get("sessionId") == session:
            yield e["method"], e["params"]


def _problems(events):
    """Console errors and requests leaving the file system, from one page's events."""
    errors, external, inline, urls = [], [], [], {}
    for method, p in events:
        if method == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"])
            errors.append(f"console.{p['type']}: {args}")
        elif method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            errors.append(f"exception: {d.get('exception', {}).get('description') or d.get('text')}")
        elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
            e = p["entry"]
            errors.append(f"log ({e['source']}): {e['text']} {e.get('url', '')}".rstrip())
        elif method == "Network.loadingFailed":
            errors.append(f"load failed: {urls.get(p['requestId'], '?')}: {p.get('errorText')}")
        elif method == "Network.requestWillBeSent":
            url = urls[p["requestId"]] = p["request"]["url"]
            if url.startswith("data:"):
                inline.append(url[:80])
            elif not url.startswith("file:"):
                external.append(url)
    return errors, external, inline


def check_page(html_path, screenshot_path, timeout=60, browser=None):
    """Load html_path in headless Chromium; report errors, requests, figures and a screenshot.

    `timeout` bounds each phase (start, attach, navigate, load, evaluate, screenshot). A
    browser passed in is reused and left running; otherwise one is started and killed here.
    """
    own = browser is None
    b = Browser(timeout) if own else browser
    ctx = s = None

    def cmd(phase, method, **params):  # on the page's session once attached
        return b.call(method, params, session=s, phase=phase, timeout=timeout)

    try:
        ctx = cmd("attach", "Target.createBrowserContext")["browserContextId"]
        target = cmd("attach", "Target.createTarget", url="about:blank", browserContextId=ctx)["targetId"]
        s = cmd("attach", "Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        b.events.clear()
        for domain in ("Runtime", "Log", "Page", "Network"):
            cmd("attach", f"{domain}.enable")
        url = Path(html_path).resolve().as_uri()
        nav = cmd("navigate", "Page.navigate", url=url)
        if nav.get("errorText"):
            raise BrowserError(f"phase 'navigate': {url}: {nav['errorText']}")
        if not any(m == "Page.loadEventFired" for m, _ in _events_for(s, b.events)):
            b.wait(lambda m: m.get("method") == "Page.loadEventFired" and m.get("sessionId") == s,
                   "load", timeout)
        info = cmd("evaluate", "Runtime.evaluate", returnByValue=True,
                   expression=f"({{title: document.title, figures: {FIGURES_JS}}})")
        if "exceptionDetails" in info:
            raise BrowserError(f"phase 'evaluate': {info['exceptionDetails'].get('text')}")
        info = info["result"]["value"]
        size = cmd("screenshot", "Page.getLayoutMetrics")
        size = size.get("cssContentSize") or size["contentSize"]  # the first is newer, in CSS pixels
        clip = {"x": 0, "y": 0, "width": max(size["width"], 1), "height": max(size["height"], 1), "scale": 1}
        shot = cmd("screenshot", "Page.captureScreenshot", format="png", clip=clip,
                   captureBeyondViewport=True)
        screenshot_path = Path(screenshot_path)
        screenshot_path.parent.mkdir(parents=True, exist_ok=True)
        screenshot_path.write_bytes(base64.b64decode(shot["data"]))
        errors, external, inline = _problems(_events_for(s, b.events))
        return PageCheck(errors, external, info["figures"], screenshot_path, is_blank(screenshot_path),
                         info["title"], inline)
    finally:
        if own:
            b.close()
        elif ctx:  # a shared browser keeps running: leave it no page behind
            b.events.clear()
            s = None  # a command to the browser, not to the page
            with contextlib.suppress(BrowserError):  # not to hide why the check failed
                cmd("close", "Target.disposeBrowserContext", browserContextId=ctx)
