"""The help screen: every key, from the binding data, and how the views connect."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from dragoman.tui.bindings import APP_KEYS, DETAIL_KEYS, TABLE_KEYS, TABLE_MOVES, help_rows

VIEWS_TEXT = """Views (: then a name, or the digit):
  1 :pools       pools, their GPUs on each mechanism, ownership, findings
  2 :nodes       nodes (of a pool after enter on it): plugin and driver pods, GPUs, devices
  3 :devices     driver → pool → node → device; / attr=value filters by attribute
  7 :attributes  every attribute and capacity published, its values, counts and pools
  4 :claims      claims → pods → devices → node; bridge-made marked ⇄; pending first
  5 :pending     stuck GPU pods with their finding; d shows evidence, the scheduler's words, the fix
  6 :findings    every finding; filter severity=error, id=both-stacks, pool=NAME
    :accounting  GPUs as allocatable, slices and claims count them; what moving the highlighted pool drops from
                 dashboards, does to quotas, and which PrometheusRules read allocatable; m marks a baseline
    :load        claims, their create/delete rates, slices, Pending pods and API objects over time; claims per
                 hour each pool's move adds; before/after baselines
    :ctx         switch kubeconfig context
Ownership: ▲ plugin (device plugin) · ● DRA · ✖ BOTH (both stacks: an error) · ↯ flapping · → migrating"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close", id="help.close", tooltip="Close the help")]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 96%; max-width: 110; height: 90%; border: round $primary; background: $panel; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        rows = help_rows(APP_KEYS, TABLE_KEYS, DETAIL_KEYS)
        width = max(len(k) for k, _ in rows + list(TABLE_MOVES))
        lines = ["Keys"] + [f"  {k.ljust(width)}  {d}" for k, d in rows + list(TABLE_MOVES)]
        with VerticalScroll() as vs:
            vs.border_title = "dragoman help (esc closes)"
            yield Static("\n".join(lines) + "\n\n" + VIEWS_TEXT, markup=False)

    def action_dismiss(self) -> None:
        self.dismiss(None)
