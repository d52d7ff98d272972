"""The dragoman terminal UI: the App, its navigation between views and detail pages, and `run(args)` behind the bare
`dragoman` command."""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import sys
from typing import Any

from dragoman.fleet.errors import ExitCode, UserError
from dragoman.tui.bindings import APP_KEYS, textual_bindings
from dragoman.tui.commands_palette import ScreenCommands
from dragoman.tui.feed import Feed
from dragoman.tui.messages import ConnectionChanged, FleetLoaded
from dragoman.tui.views import SCREENS, VIEW_DOCS, VIEWS, resolve_jump
from textual.app import App

GIL_SWITCH_INTERVAL = 0.0005
UNREACHABLE_HINT = "Run `dragoman --demo` to explore a simulated fleet instead."


class DragomanApp(App):
    """Views of one fleet, kept live from its feed; screens stack as the operator drills down."""

    CSS_PATH = "app.tcss"
    TITLE = "dragoman"
    COMMANDS = {ScreenCommands}
    # No app-wide key writes anything, so read-only mode has nothing to drop here (screens with writes filter theirs).
    BINDINGS = textual_bindings(APP_KEYS)
    COMMAND_PALETTE_BINDING = "ctrl+p"
    ENABLE_COMMAND_PALETTE = True

    def __init__(
        self,
        feed: Feed,
        *,
        kubeconfig: str | None = None,
        on_exit=None,
        read_only: bool = False,
        pool_label: str | None = None,
    ) -> None:
        super().__init__()
        self.feed = feed
        self.kubeconfig = kubeconfig
        self.read_only = read_only or feed.info.read_only
        self.pool_label = pool_label
        self._on_exit = on_exit
        self._held_keys: list = []
        # Kept by the screens across visits: the playground's selectors of this session and the one it was left on,
        # and the Prometheus the :load view reads (set by `run` from --prometheus).
        self.cel_history: list[str] = []
        self.cel_resume: Any = None
        self.prometheus_url: str | None = None
        self.audit_path: str | None = None  # a demo's own audit log (None: the operator's)

    # ------------------------------------------------------------------ lifecycle
    def on_mount(self) -> None:
        # The diagnosis thread holds the GIL for up to the switch interval each time the UI thread wakes from I/O;
        # a keystroke crosses many such wake-ups, so a short interval keeps typing immediate (convoy effect).
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(GIL_SWITCH_INTERVAL)
        self.push_screen(self._table("pools", None))
        # The first frame goes out before the informers start decoding LIST pages on this loop.
        self.call_after_refresh(self._wire, self.feed)

    def _wire(self, feed: Feed) -> None:
        # The header follows the connection; each screen listens for the rows it shows (tui/messages.py).
        feed.listen(self)
        feed.start()
        if feed.cluster is not None and not self.read_only:
            self.run_worker(
                self._ask_write_access(feed), group="rbac", description="ask RBAC whether these credentials may write"
            )

    async def _ask_write_access(self, feed: Feed) -> None:
        """One SelfSubjectAccessReview (it changes nothing): may these credentials patch nodes, a migration's first
        write?"""
        body = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"verb": "patch", "resource": "nodes"}},
        }
        try:
            ans = await feed.cluster.request(
                "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body, retry=True
            )
        except Exception:  # noqa: BLE001 - an API server that cannot answer leaves the header as it is
            return
        feed.info.may_write = bool((ans.get("status") or {}).get("allowed"))
        self.refresh_header()

    async def on_unmount(self) -> None:
        sys.setswitchinterval(getattr(self, "_switch_interval", 0.005))
        await self.feed.stop()

    def on_fleet_loaded(self, _: FleetLoaded) -> None:
        self.refresh_header()

    def on_connection_changed(self, _: ConnectionChanged) -> None:
        self.refresh_header()

    def refresh_header(self, screen=None) -> None:
        from dragoman.widgets.header import StatusHeader

        state = self.feed.state
        status = state.status
        if status == "live" and not self.feed.loaded:
            status = "syncing"
        message = state.message.split(" Retrying in")[0] if state.message else ""
        info = self.feed.info
        info.read_only = self.read_only
        screens = [screen] if screen is not None else list(self.screen_stack)
        for s in screens:
            for h in s.query(StatusHeader):
                h.show(info, status, message, notes=getattr(self.feed.store, "notes", None))

    # ------------------------------------------------------------------ keys
    async def on_event(self, event) -> None:
        # The app reads keys in order before any screen does: a burst like ":pending" or "/h100" is routed to the
        # prompt here, synchronously, instead of racing the focus change that opening the prompt causes.
        from textual import events

        if isinstance(event, events.Key):
            # A screen pushed by a jump composes asynchronously: keys typed behind the jump wait for it, in order.
            if self._held_keys or not getattr(self.screen, "ready", True):
                self._held_keys.append(event)
                return
            if self._route_prompt_key(event):
                return
        await super().on_event(event)

    def screen_ready(self) -> None:
        """A screen finished mounting: replay the keys that waited for it."""
        held, self._held_keys = self._held_keys, []
        for ev in held:
            self.post_message(ev)

    def _route_prompt_key(self, event) -> bool:
        from dragoman.tui.screens.prompt import PromptScreen
        from textual.widgets import Input, TextArea

        screen = self.screen
        # None: a screen without the bar (a detail page, a dialog); "": the bar is closed; else what it is open for.
        mode = screen.prompt_mode if isinstance(screen, PromptScreen) else None
        if mode and isinstance(screen, PromptScreen):
            prompt = screen.query_one("#prompt", Input)
            if event.key == "escape":
                screen.close_prompt()
            elif event.key == "enter":
                screen.submit_prompt()
            elif event.key == "tab":
                screen.complete_prompt()
            elif event.key == "backspace":
                prompt.action_delete_left()
            elif event.is_printable and event.character:
                prompt.insert_text_at_cursor(event.character)
            else:
                return False
            return True
        # A TextArea (the CEL editor) takes ':' and '/' as text, like an Input.
        if event.key not in ("colon", "slash") or isinstance(self.focused, (Input, TextArea)):
            return False
        if mode is None:  # a detail page: go back to the view below it, then prompt there
            if event.key == "slash":
                return False
            while len(self.screen_stack) > 2 and not isinstance(self.screen, PromptScreen):
                self.pop_screen()
            screen = self.screen
            if not isinstance(screen, PromptScreen):
                return False
        if not isinstance(screen, PromptScreen):
            return False
        if event.key == "colon":
            screen.action_jump_prompt()
        else:
            screen.action_filter()
        return True

    # ------------------------------------------------------------------ navigation
    def _table(self, name: str, scope):
        from dragoman.tui.screens.table import TableScreen

        return TableScreen(VIEWS[name](scope))

    def open_view(self, name: str, scope=None) -> None:
        self.push_screen(self._table(name, scope))

    def open_detail(self, ref, mode: str, replace: bool = False, more=None) -> None:
        from dragoman.tui.screens.detail import DetailScreen

        if replace:
            self.pop_screen()
        self.push_screen(DetailScreen(tuple(ref), mode, more))

    def open_logs(self, ref) -> None:
        """`l` on a row or a page: a pod's log; a node's means its DRA driver's pod, else its device plugin's (a
        finding's fix says "check the DRA driver pod's logs")."""
        from dragoman.tui.screens.logs import LogScreen

        kind, ns, name = tuple(ref) if ref else ("", "", "")
        if kind == "Node":
            node = self.feed.fleet.model.node(name)
            pods = [*(node.dra_driver if node else ()), *(node.device_plugin if node else ())]
            if not pods:
                self.notify(f"node {name} runs no DRA driver or device-plugin pod: no log to show", severity="warning")
                return
            (ns, name), kind = pods[0].key, "Pod"
        if kind != "Pod":
            self.notify(
                f"l shows a pod's log; this is {'a ' + kind if kind else 'no object'}: open a pod (Stuck pods, or a "
                "node's describe page, which links its pods)",
                severity="warning",
            )
            return
        self.push_screen(LogScreen(ns, name))

    def back(self, quit_at_root: bool = False) -> None:
        # screen_stack[0] is Textual's default screen; [1] is the Pools view, the root.
        if len(self.screen_stack) > 2:
            self.pop_screen()
        elif quit_at_root:
            self.exit(0)

    def jump(self, name: str) -> None:
        name = name.strip().lower()
        target = resolve_jump(name)
        if target == "ctx":
            self.action_switch_context()
            return
        if target is None:
            names = ", ".join(n for n, *_ in VIEW_DOCS)
            self.notify(
                f"no view named {name!r}; try one of: {names}" if name else f"views: {names}", severity="warning"
            )
            return
        if target in SCREENS:
            # A tool (playground, wizard, accounting, load) opens over the view the operator is on, so esc returns
            # there; one tool replaces another instead of piling up.
            while len(self.screen_stack) > 2 and getattr(self.screen, "name", None) in SCREENS:
                self.pop_screen()
            if target == "migrate":
                from dragoman.tui.screens.migrate import open_wizard

                open_wizard(self, SCREENS[target])  # back to a run the operator left, if one goes on
            else:
                self.push_screen(SCREENS[target]())
            return
        while len(self.screen_stack) > 2:
            self.pop_screen()
        if target != "pools":
            self.push_screen(self._table(target, None))

    # ------------------------------------------------------------------ actions
    def action_help(self) -> None:
        from dragoman.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_jump(self) -> None:
        from dragoman.tui.screens.prompt import PromptScreen

        while len(self.screen_stack) > 2 and not isinstance(self.screen, PromptScreen):
            self.pop_screen()
        screen = self.screen_stack[-1]
        if isinstance(screen, PromptScreen):
            screen.action_jump_prompt()

    def action_relist(self) -> None:
        if self.feed.syncer is None:
            self.notify("a snapshot does not change: nothing to relist", severity="information")
            return
        self.feed.relist()
        self.notify("listing every kind again")

    def action_switch_context(self) -> None:
        from dragoman.tui.screens.context import ContextScreen
        from dragoman.tui.source import list_contexts

        if self.feed.syncer is None:
            self.notify("a snapshot has no contexts", severity="warning")
            return
        try:
            contexts, _current = list_contexts(self.kubeconfig)
        except UserError as exc:
            self.notify(exc.message, severity="error")
            return

        def chosen(name: str | None) -> None:
            if name and name != self.feed.info.context:
                self.run_worker(
                    self._reconnect(name), exclusive=True, group="context", description=f"connect to {name}"
                )

        self.push_screen(ContextScreen(contexts, self.feed.info.context), chosen)

    async def _reconnect(self, context: str) -> None:
        from dragoman.tui.source import open_cluster_feed

        self.notify(f"connecting to context {context} …")
        try:
            feed = await open_cluster_feed(
                self.kubeconfig,
                context,
                badge=self.feed.info.badge,
                read_only=self.read_only,
                pool_label=self.pool_label,
            )
        except UserError as exc:
            self.notify(exc.message, severity="error", timeout=10)
            return
        old = self.feed
        self.feed = feed
        await old.stop()
        while len(self.screen_stack) > 1:
            self.pop_screen()
        self._wire(feed)
        self.push_screen(self._table("pools", None))


def _need_terminal() -> None:
    """The UI reads keys from standard input and draws on standard output: both must be a terminal (a closed or
    redirected one would leave it drawing forever for nobody)."""
    for fd, name in ((0, "standard input"), (1, "standard output")):
        if not os.isatty(fd):
            raise UserError(
                f"the terminal UI needs a terminal, and {name} is not one; run it in a terminal, or use a headless "
                "command (`dragoman check`, `dragoman migrate`).",
                ExitCode.INPUT,
            )


def _friendly(exc: UserError, args: argparse.Namespace) -> UserError:
    if args.kubeconfig or args.context or args.demo or args.snapshot:
        return exc
    return UserError(f"{exc.message.rstrip('.')}. {UNREACHABLE_HINT}", exc.exit_code)


async def _main(args: argparse.Namespace) -> int:
    from dragoman.tui.source import (
        DemoProcess,
        control_plane_dir,
        open_cluster_feed,
        open_snapshot_feed,
        with_prometheus,
    )

    demo = None
    kubeconfig = args.kubeconfig
    if getattr(args, "prometheus", None):
        from dragoman.fleet.load import prometheus_url_problem

        if prometheus_url_problem(args.prometheus):
            raise UserError(prometheus_url_problem(args.prometheus) + ".", ExitCode.INPUT)
    try:
        if args.snapshot:
            feed = open_snapshot_feed(args.snapshot, pool_label=args.pool_label)
        else:
            badge = ""
            if args.demo:
                demo = DemoProcess(control_plane=control_plane_dir(args), prometheus=with_prometheus(args))
                kubeconfig = await asyncio.to_thread(demo.start)
                args.prometheus = getattr(args, "prometheus", None) or demo.prometheus_url
                badge = "DEMO"
            try:
                feed = await open_cluster_feed(
                    kubeconfig, args.context, badge=badge, read_only=args.read_only, pool_label=args.pool_label
                )
            except UserError as exc:
                raise _friendly(exc, args) from None
        _need_terminal()
        app = DragomanApp(feed, kubeconfig=kubeconfig, read_only=args.read_only, pool_label=args.pool_label)
        app.prometheus_url = getattr(args, "prometheus", None)  # read by the :load view
        import signal

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            # The UI ends as `q` ends it (terminal restored), then the demo's child and folder go in the finally below.
            loop.add_signal_handler(sig, functools.partial(app.exit, return_code=128 + sig))
        # A demo's writes go to its own audit log (the wizard and the playground read this); None: the operator's.
        app.audit_path = demo.audit_path if demo is not None else None
        await app.run_async()
        return int(app.return_code or 0)
    finally:
        if demo is not None:
            demo.stop()


def run(args: argparse.Namespace) -> int:
    """`dragoman` without a subcommand: connect first (one sentence and exit 2 when that fails), then open the UI."""
    try:
        return asyncio.run(_main(args))
    except UserError:
        raise
    except KeyboardInterrupt as exc:
        return 128 + int(getattr(exc, "signum", 2))  # SIGTERM/SIGHUP come as cli.Interrupted


if __name__ == "__main__":  # pragma: no cover
    from dragoman.tui.cli import main

    sys.exit(main())
