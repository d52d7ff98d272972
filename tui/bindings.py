"""Key bindings as data: each with a stable id (remappable), a tooltip and a deliberate place in the footer; read-only
mode drops dangerous ones."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Key:
    id: str
    keys: str
    action: str
    description: str
    tooltip: str
    show: bool = True
    dangerous: bool = False
    priority: bool = False


APP_KEYS = (
    Key("app.help", "question_mark,f1", "help", "Help", "Every key of this screen and what it does"),
    Key(
        "app.jump",
        "colon",
        "jump",
        "Jump",
        "Go to a view by name: :pools :nodes :devices :attributes :claims :pending :findings :cel :migrate "
        ":accounting :load :ctx (k9s names too: :po :no)",
    ),
    Key("app.relist", "ctrl+r", "relist", "Relist", "Throw away the watches and list every kind again"),
    Key("app.quit", "ctrl+q", "quit", "Quit", "Leave dragoman", show=False, priority=True),
)

TABLE_KEYS: tuple[Key, ...] = (
    Key("view.filter", "slash", "filter", "Filter", "Filter rows: words, label=value, attr=value (esc clears)"),
    Key("view.yaml", "y", "yaml", "YAML", "The selected object as YAML (the marked ones, when rows are marked)"),
    Key("view.describe", "d", "describe", "Describe", "A describe page of the selected object that follows its links"),
    # k9s's `l`: a pod's log (on a node: its DRA driver's pod, else its device plugin's), from the API server.
    Key(
        "view.logs",
        "l",
        "logs",
        "Logs",
        "The selected pod's log (a node: its DRA driver's or device plugin's pod), as kubectl logs",
        show=False,
    ),
    # k9s's `c`: the row's name, shown in the notification too (a terminal without OSC 52 copies nothing, silently).
    Key(
        "view.copy", "c", "copy_name", "Copy", "Copy the selected row's name (shown too, to select by hand)", show=False
    ),
    # Out of the footer, like space (help lists both): at 80 columns "? Help" was cut off the end.
    Key("view.back", "escape", "back", "Back", "Back to the previous view (clears a filter first)", show=False),
    Key("view.quit", "q", "back_or_quit", "Back/Quit", "Back, or quit at the first view", show=False),
    Key(
        "view.playground",
        "p",
        "open_playground",
        "Playground",
        "Stuck pods: the selected pod's selector in the CEL playground",
    ),
    Key(
        "view.migrate",
        "m",
        "open_migrate",
        "Migrate",
        "Pools: the migration wizard of the selected pool (plan only in read-only)",
    ),
)

# The digits every view has (tables, accounting, load): one table, read by each screen and by help.
VIEW_DIGITS = (
    Key("view.pools", "1", "jump_to('pools')", "Pools", "The Pools view", show=False),
    Key("view.nodes", "2", "jump_to('nodes')", "Nodes", "The Nodes view", show=False),
    Key("view.devices", "3", "jump_to('devices')", "Devices", "The Devices view", show=False),
    Key("view.claims", "4", "jump_to('claims')", "Claims", "The Claims view", show=False),
    Key("view.pending", "5", "jump_to('pending')", "Stuck", "The Stuck pods view", show=False),
    Key("view.findings", "6", "jump_to('findings')", "Findings", "The Findings view", show=False),
    Key("view.attributes", "7", "jump_to('attributes')", "Attributes", "The Attribute distribution view", show=False),
)
TABLE_KEYS = TABLE_KEYS + VIEW_DIGITS

DETAIL_KEYS = (
    Key("detail.back", "escape,q", "back", "Back", "Back to where you were"),
    Key("detail.yaml", "y", "yaml", "YAML", "This object as YAML"),
    Key("detail.describe", "d", "describe", "Describe", "This object's describe page"),
    Key("detail.logs", "l", "logs", "Logs", "A pod's log (a node: its DRA driver's or device plugin's pod)"),
)

LOG_KEYS = (
    Key("logs.back", "escape,q", "back", "Back", "Back to where you were"),
    # Short words: at 80 columns the footer must still end with ": Jump".
    Key("logs.next", "n", "next_container", "Next", "The log of the pod's next container"),
    Key("logs.previous", "p", "previous_instance", "Previous", "The log of the container's last run (after a restart)"),
    Key("logs.reload", "r", "reload", "Reload", "Read the latest lines again"),
)

TABLE_MOVES = (
    ("j / k / ↑ / ↓", "move the cursor"),
    ("g / G", "first / last row"),
    ("pgup / pgdn", "page up / down"),
    ("space", "mark the row: y shows the marked rows' YAML, ctrl+p copies their names"),
    ("enter", "drill down: pool → nodes → devices; open a row"),
    ("tab", "on a describe page: move between the page (arrows and pgup/pgdn scroll it) and its links"),
    ("mouse", "click selects a row, double-click opens it, the wheel scrolls"),
    ("ctrl+p", "the command palette: what this screen can do"),
)

# The wizard's moves that are no binding of its own (help lists them under "Also"): its plan scrolls once focused.
MIGRATE_MOVES = (
    ("↑ / ↓ / j / k", "select a step: the line under the steps says it whole, the plan's text follows it"),
    ("enter", "run the selected step (as s)"),
    ("p", "re-plan: read the cluster again"),
    ("tab", "to the plan's text (↑ / ↓ and pgup / pgdn scroll it); shift+tab back to the steps"),
    ("mouse", "the wheel scrolls the plan; a click selects a step"),
)
# The wizard opened without a pool: a list to pick from.
PICKER_MOVES = (
    ("↑ / ↓ / j / k", "choose a pool (those already on DRA are at the end: pick one to roll it back)"),
    ("enter", "plan the chosen pool's migration (nothing is written before a confirmation)"),
)
# The playground's editor takes every printable key: ? and : are typed, not help and jump.
PLAYGROUND_MOVES = (
    ("? / :", "typed into the editor: f1 is help here; on the device table (^t) ? is help and : jumps"),
)


# Short words, esc out of the footer (help lists it): at 80 columns the footer cut ": Jump" (issue 30).
MIGRATE_KEYS = (
    Key(
        "migrate.step",
        "s",
        "run_step",
        "Step",
        "Run the selected step alone, with its own confirmation; the wizard stops after it and offers the next",
        dangerous=True,
    ),
    Key(
        "migrate.apply",
        "a",
        "apply",
        "Run all",
        "Run every step left, to the end, after one confirmation",
        dangerous=True,
    ),
    Key(
        "migrate.rollback",
        "r",
        "rollback",
        "Rollback",
        "Undo the steps the pool's state records (confirmation first)",
        dangerous=True,
    ),
    Key("migrate.batches", "b", "batches", "Batch", "Choose the batch size and the canary node, then re-plan"),
    Key("migrate.replan", "p", "replan", "Re-plan", "Read the cluster again and rebuild the plan", show=False),
    Key("migrate.back", "escape,q", "back", "Back", "Back to the previous view", show=False),
)

# Short descriptions: at 80 columns the footer must still end with "f1 Help" (it was cut to "f1 He").
GENERATE_KEYS = (
    Key("gen.back", "escape", "back", "Back", "Back to the playground"),
    Key("gen.save", "ctrl+s", "save", "Save", "Write the YAML to the file named in the form", priority=True),
    Key(
        "gen.dryrun",
        "ctrl+t",
        "dry_run",
        "Dry run",
        "Send the objects with dryRun=All: the API server validates them, nothing is stored",
        priority=True,
        # Not a write, but a request to the cluster under the operator's credentials: read-only sends none.
        dangerous=True,
    ),
    Key(
        "gen.apply",
        "ctrl+g",
        "apply",
        "Apply",
        "Create or replace the objects (confirmation, audit log)",
        priority=True,
        dangerous=True,
    ),
    Key("gen.copy", "f2", "copy_yaml", "Copy", "Copy the YAML to the clipboard"),
)


def dangerous_actions(keys) -> frozenset[str]:
    """The actions of these keys that write (or reach the cluster): what read-only mode takes away."""
    return frozenset(k.action for k in keys if k.dangerous)


def textual_bindings(keys, read_only: bool = False):
    """Textual Binding objects for these keys; dangerous ones do not exist at all in read-only mode."""
    from textual.binding import Binding

    return [
        Binding(k.keys, k.action, k.description, show=k.show, id=k.id, tooltip=k.tooltip, priority=k.priority)
        for k in keys
        if not (read_only and k.dangerous)
    ]
