"""`l`: a pod container's log, read from the API server's pods/log subresource (as `kubectl logs`), with a sentence
when there is none to show: a snapshot, a container that has not started, the embedded simulator (it runs no
containers), a 4xx from a real cluster."""

from __future__ import annotations

from dragoman.tui.bindings import LOG_KEYS, textual_bindings
from dragoman.tui.screens.base import DragomanScreen, PaletteCommand
from dragoman.widgets.footer import SteadyFooter
from dragoman.widgets.header import StatusHeader
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

TAIL_LINES = 1000  # as k9s's default tail: enough to read, bounded for a chatty container
LIMIT_BYTES = 2 * 1024 * 1024
DEFAULT_CONTAINER = "kubectl.kubernetes.io/default-container"


def containers_of(pod: dict) -> list[str]:
    """The pod's containers, the default one first (kubectl's annotation, else the first), init containers last."""
    spec = pod.get("spec") or {}
    names = [str(c.get("name")) for c in spec.get("containers") or [] if c.get("name")]
    default = ((pod.get("metadata") or {}).get("annotations") or {}).get(DEFAULT_CONTAINER)
    if default in names:
        names.remove(default)
        names.insert(0, default)
    return names + [str(c.get("name")) for c in spec.get("initContainers") or [] if c.get("name")]


def no_log_sentence(pod: dict, container: str, demo: bool) -> str:
    """What an empty answer means, in words."""
    ns, name = (pod.get("metadata") or {}).get("namespace", ""), (pod.get("metadata") or {}).get("name", "")
    if not (pod.get("spec") or {}).get("nodeName"):
        return (
            f"pod {ns}/{name} is not on a node yet, so container {container} has not run and has no log: "
            "d shows why it waits"
        )
    if demo:
        return (
            f"no log lines: the embedded simulator runs no containers, so container {container} of pod {ns}/{name} "
            "has never written one. On a real cluster this page shows the container's log (kubectl logs)."
        )
    return f"container {container} of pod {ns}/{name} has written no log lines (the API server sent an empty log)"


def error_sentence(exc: Exception, ns: str, name: str, container: str) -> str:
    """A refusal in one sentence: the server's own words, and what to do."""
    from dragoman.fleet.cluster import ApiError

    if isinstance(exc, ApiError):
        said = exc.detail.rstrip(".")
        if exc.status == 403:
            return f"not allowed to read the log of pod {ns}/{name} ({said}): your role needs get on pods/log"
        if exc.status == 404:
            return f"pod {ns}/{name} is gone, or its log is: the API server answered 404 ({said})"
        if 400 <= exc.status < 500:
            return f"the API server will not give the log of container {container} ({exc.status}: {said})"
        return f"the API server failed to give the log ({exc.status}: {said}); r tries again"
    return f"could not read the log: {getattr(exc, 'message', None) or exc}; r tries again"


class LogScreen(DragomanScreen):
    """The log of one container of one pod; n cycles the containers, p the previous instance, r reads again."""

    help_title = "pod logs"
    BINDINGS = textual_bindings(LOG_KEYS)
    DEFAULT_CSS = """
    LogScreen #heading { height: auto; max-height: 3; }
    LogScreen #log-scroll { height: 1fr; padding: 0 1; }
    """

    def __init__(self, namespace: str, name: str) -> None:
        super().__init__(name=f"logs:{namespace}:{name}")
        self.namespace = namespace
        self.pod_name = name
        self.containers: list[str] = []
        self.index = 0
        self.previous = False
        self.text = ""  # what the page shows (tests read it)
        self.ready = False

    @property
    def container(self) -> str:
        return self.containers[self.index] if self.containers else ""

    def compose(self) -> ComposeResult:
        yield StatusHeader()
        yield Static("", id="heading", markup=False)
        with VerticalScroll(id="log-scroll"):
            yield Static("reading the log from the API server…", id="log-text", markup=False)
        yield SteadyFooter()

    def _pod(self) -> dict | None:
        from dragoman.widgets.detail import raw_object

        obj = raw_object(self.app.feed.fleet.model, ("Pod", self.namespace, self.pod_name))
        return obj if isinstance(obj, dict) else None

    def on_mount(self) -> None:
        self.app.refresh_header(self)
        pod = self._pod()
        self.containers = containers_of(pod) if pod else []
        self.query_one("#log-scroll").focus()
        self.load()

    def _heading(self) -> str:
        which = f"container {self.container}" if self.container else "no container"
        others = f" ({self.index + 1} of {len(self.containers)}: n for the next)" if len(self.containers) > 1 else ""
        prev = ", previous instance" if self.previous else ""
        return f"Logs of pod {self.namespace}/{self.pod_name} · {which}{others}{prev} · last {TAIL_LINES} lines"

    def load(self) -> None:
        self.query_one("#heading", Static).update(self._heading())
        self.run_worker(self._load, exclusive=True, group="log", description="read a pod's log")  # type: ignore[arg-type]

    def _show(self, text: str) -> None:
        self.text = text
        self.query_one("#log-text", Static).update(text)
        self.ready = True
        self.app.screen_ready()

    async def _load(self) -> None:
        feed = self.app.feed
        pod = self._pod()
        if pod is None:
            self._show(f"pod {self.namespace}/{self.pod_name} is no longer in the cluster: it has no log to show")
            return
        if feed.cluster is None:
            self._show(
                "a snapshot holds objects, not logs: connect to the cluster (--kubeconfig, --context) to read "
                f"the log of pod {self.namespace}/{self.pod_name}"
            )
            return
        if not self.containers:
            self._show(f"pod {self.namespace}/{self.pod_name} names no container: there is no log to read")
            return
        if not (pod.get("spec") or {}).get("nodeName"):
            # kube-apiserver answers an empty log for a pod on no node (LogLocation: no host, no stream): say why.
            self._show(no_log_sentence(pod, self.container, demo=False))
            return
        try:
            text = await feed.cluster.pod_log(
                self.namespace,
                self.pod_name,
                self.container,
                tail_lines=TAIL_LINES,
                previous=self.previous,
                limit_bytes=LIMIT_BYTES,
            )
        except Exception as exc:  # noqa: BLE001 - every failure becomes the page's sentence, never a traceback
            self._show(error_sentence(exc, self.namespace, self.pod_name, self.container))
            return
        if not text.strip():
            self._show(no_log_sentence(pod, self.container, demo=feed.info.badge == "DEMO"))
            return
        self._show(text.rstrip("\n"))
        self.query_one("#log-scroll", VerticalScroll).scroll_end(animate=False)  # the newest lines, as k9s opens

    def action_next_container(self) -> None:
        if len(self.containers) > 1:
            self.index = (self.index + 1) % len(self.containers)
            self.load()
        else:
            self.notify(f"pod {self.pod_name} has one container", timeout=3)

    def action_previous_instance(self) -> None:
        self.previous = not self.previous
        self.load()

    def action_reload(self) -> None:
        self.load()

    def action_back(self) -> None:
        self.app.back()

    def palette_commands(self) -> list[PaletteCommand]:
        return [
            ("logs: read again", "the latest lines (r)", self.action_reload),
            ("logs: next container", "the pod's next container (n)", self.action_next_container),
            (
                "logs: previous instance",
                "the log of the container's last run, after a restart (p)",
                self.action_previous_instance,
            ),
        ]
