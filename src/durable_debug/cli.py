"""The ``durable-debug`` command: a demo run, and a look at any store without Jupyter.

    $ durable-debug demo                       # runs a demo graph into durable-debug-demo.db,
                                               # prints its checkpoint tree, writes an HTML page
    $ durable-debug inspect runs.db            # the threads in a SQLite file
    $ durable-debug inspect runs.db --thread job-7 --html job-7.html
    $ durable-debug inspect postgresql://app@db/agents --thread job-7
    $ durable-debug recover postgresql://app@db/agents --graph myapp.flows:builder

A path or URL that cannot be used, a store that cannot be read (corrupt rows, a server that
went away) or any other error of the package gets one line on stderr and exit status 2, never a
traceback (set ``DURABLE_DEBUG_TRACEBACK=1`` to see one). Listing threads, a thread that cannot
be read is marked ``broken`` and the others are still listed.
"""

from __future__ import annotations

import argparse
import asyncio
import operator
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

from typing_extensions import TypedDict

if TYPE_CHECKING:
    from durable_debug.checkpoint.base import BaseCheckpointSaver
    from durable_debug.graph import CompiledStateGraph

__all__ = ["main"]

DEMO_DB = "durable-debug-demo.db"
DEMO_HTML = "durable-debug-demo.html"
DEMO_THREAD = "demo"


class UsageError(Exception):
    """A bad path, URL or option: reported as one line, exit status 2."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``durable-debug`` command."""
    parser = _parser()
    args = parser.parse_args(argv)
    from durable_debug.checkpoint import DurableDebugError

    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        print("durable-debug: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if os.environ.get("DURABLE_DEBUG_TRACEBACK"):
            raise
        known = isinstance(exc, (UsageError, DurableDebugError))
        print(f"durable-debug: error: {one_line(exc, known=known)}", file=sys.stderr)
        return 2


def one_line(exc: BaseException, *, known: bool = True) -> str:
    """An error as one line: its message (whitespace collapsed), preceded by its type when it
    is not one of the package's own errors (a driver's or an unexpected one)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if not known:
        text = f"{type(exc).__name__}: {text}"
    if len(text) > 1000:
        text = text[:997] + "..."
    return text


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="durable-debug",
        description="Time-travel debugging for durable graph execution.",
    )
    from durable_debug._version import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="run a demo graph on SQLite and show its checkpoint tree",
        description="Run a demo graph (a fan-out, a failure and resume, an interrupt answered, "
        "a fork) on a SQLite file, print the thread's checkpoint tree, and write a standalone "
        "HTML page of it.",
    )
    demo.add_argument("--db", default=DEMO_DB, help=f"SQLite file to use (default {DEMO_DB})")
    demo.add_argument("--html", default=DEMO_HTML, help=f"page to write (default {DEMO_HTML})")
    demo.set_defaults(run=_demo)
    inspect = commands.add_parser(
        "inspect",
        help="list the threads of a store, or show one thread",
        description="Read a checkpoint store without the graph's code: list its threads, or "
        "print one thread's checkpoint tree and history, and export it as HTML.",
    )
    inspect.add_argument("store", metavar="DB_OR_URL", help="a SQLite file or a saver URL")
    inspect.add_argument("--thread", help="the thread to show")
    inspect.add_argument("--html", metavar="OUT", help="also write a standalone HTML page")
    inspect.set_defaults(run=_inspect)
    _add_health(commands)
    _add_check(commands)
    _add_sweep(commands)
    _add_recover(commands)
    _add_replay_check(commands)
    return parser


# -- demo -------------------------------------------------------------------------------------


class Release(TypedDict, total=False):
    """State of the demo graph: a small release note written section by section."""

    topic: str
    sections: list[str]
    drafts: Annotated[list[str], operator.add]
    decision: str
    published: str


def demo_graph(saver: BaseCheckpointSaver) -> Any:
    """plan → write (one Send per section, in parallel) → review (asks a human) → publish.

    The first attempt at the "body" section fails, as a flaky model call would.
    """
    from durable_debug.graph import START, Send, StateGraph, interrupt

    failed: set[str] = set()

    def plan(state: Release) -> dict[str, Any]:
        return {"sections": ["intro", "body", "summary"]}

    def fan_out(state: Release) -> list[Send]:
        return [Send("write", {"topic": state["topic"], "section": s}) for s in state["sections"]]

    async def write(task: dict[str, str]) -> dict[str, Any]:
        if task["section"] == "body" and "body" not in failed:
            # Fail after the other sections finished (they run first, in Send order), so
            # the demo always shows their writes saved and only "body" running again.
            await asyncio.sleep(0)
            failed.add("body")
            raise ConnectionError("the model endpoint timed out writing 'body'")
        return {"drafts": [f"{task['section']}: notes on {task['topic']}"]}

    def review(state: Release) -> dict[str, Any]:
        decision = interrupt({"question": "publish these drafts?", "drafts": state["drafts"]})
        return {"decision": decision}

    def publish(state: Release) -> dict[str, Any]:
        return {"published": f"{len(state['drafts'])} sections, {state['decision']}"}

    return (
        StateGraph(Release)
        .add_node("plan", plan)
        .add_node("write", write)
        .add_node("review", review)
        .add_node("publish", publish)
        .add_edge(START, "plan")
        .add_conditional_edges("plan", fan_out, ["write"])
        .add_edge("write", "review")
        .add_edge("review", "publish")
        .compile(checkpointer=saver)
    )


def _demo(args: argparse.Namespace) -> int:
    db = Path(args.db)
    html = Path(args.html)
    for path in (db, html):
        if not path.parent.exists():
            raise UsageError(f"no directory {str(path.parent)!r} to write {path.name!r} into")
    if db.exists():
        _check_store_file(db)
    return asyncio.run(_run_demo(db, html))


async def _run_demo(db: Path, html: Path) -> int:
    from durable_debug.checkpoint import SqliteSaver
    from durable_debug.checkpoint.names import INTERRUPT
    from durable_debug.graph import Command
    from durable_debug.inspect import Recorder, adag_data, aexport_html
    from durable_debug.inspect.text import tree_text

    saver = SqliteSaver(str(db))
    try:
        await saver.adelete_thread(DEMO_THREAD)  # a fresh demo each time
        graph = demo_graph(saver)
        cfg = {"configurable": {"thread_id": DEMO_THREAD}}
        say = _progress
        async with Recorder() as rec:
            say(f"running the demo graph into {db} (thread {DEMO_THREAD!r})")
            try:
                await graph.ainvoke({"topic": "durable execution"}, cfg)
            except ConnectionError as exc:
                say(f"  the fan-out failed: {exc}; two sections were saved")
            say("  resuming with invoke(None): only the failed section runs again")
            paused = await graph.ainvoke(None, cfg)
            (question,) = paused[INTERRUPT]
            say(f"  paused at review: {question.value['question']!r}")
            await graph.ainvoke(Command(resume="approved"), cfg)
            say("  answered 'approved': published")
            history = [s async for s in graph.aget_state_history(cfg)]
            after_plan = next(s.config for s in history if s.next == ("write",) * 3)
            fork = await graph.aupdate_state(after_plan, {"sections": ["intro", "summary"]})
            say("  forked after plan with two sections instead of three, and reran it")
            await graph.ainvoke(None, fork)
            await graph.ainvoke(Command(resume="approved, shorter"), cfg)
            say("  answered 'approved, shorter' on the fork: published")
        print()
        print(tree_text(await adag_data(graph, cfg)))
        print()
        print("node executions:")
        for row in rec.counts_frame().itertuples():
            print(f"  {row.summary}")
        await aexport_html(graph, cfg, html)
        print()
        print(f"wrote {html} (open it in a browser: no server, no network)")
        print(f"the checkpoints are in {db}; look again with: durable-debug inspect {db}")
    finally:
        await saver.aclose()
    return 0


def _progress(message: str) -> None:
    print(message, flush=True)


# -- inspect ----------------------------------------------------------------------------------


def _inspect(args: argparse.Namespace) -> int:
    saver = _open_store(args.store)
    if saver is None:  # no checkpoint tables: nothing to read, and nothing is written
        print("no threads in this store")
        return 0
    try:
        return asyncio.run(_run_inspect(saver, args.thread, args.html))
    finally:
        _close(saver)


async def _run_inspect(saver: BaseCheckpointSaver, thread: str | None, html: str | None) -> int:
    if thread is None:
        if html:
            raise UsageError("--html needs --thread: say which thread to export")
        return await _print_threads(saver)
    # Only reading one thread needs these (listing imports the listing module alone).
    from durable_debug.checkpoint.base import OutlineSaver
    from durable_debug.inspect import aread_thread
    from durable_debug.inspect.dag import DagReader, dag_data_of
    from durable_debug.inspect.export import write_html
    from durable_debug.inspect.findings import frame_findings_text
    from durable_debug.inspect.frames import aoutline_history_frame, history_frame_of
    from durable_debug.inspect.stored import SaverView
    from durable_debug.inspect.text import tree_text
    from durable_debug.inspect.thread import alist_thread, asubgraph_namespaces
    from durable_debug.inspect.thread import subgraph_namespaces as subgraph_namespaces_of

    view = SaverView(saver)
    cfg = {"configurable": {"thread_id": thread}}
    _progress_err(f"reading thread {thread!r}…")
    if html is None and isinstance(saver, OutlineSaver):
        # The tree and the table from the outline (no state decoded: the page shows none).
        reader = DagReader(view, cfg)
        await reader.arefresh()
        if not reader.ids():
            await _no_thread(view, thread)
        print(tree_text(reader.dag()))
        await _print_subgraphs(view, thread, await asubgraph_namespaces(view, thread), None)
        frame = await aoutline_history_frame(reader)
    else:
        # One read: the tree, the subgraphs' trees, the table and the page (and whether the
        # thread exists: no checkpoint read, decoded and dropped first to ask).
        listed = await alist_thread(view, thread)
        if not listed:
            await _no_thread(view, thread)
        read = await aread_thread(view, cfg, listed=listed)
        print(tree_text(dag_data_of(read)))
        await _print_subgraphs(view, thread, subgraph_namespaces_of(listed), listed)
        frame = history_frame_of(read)
    print()
    print(history_text(frame))
    found = frame_findings_text(frame)
    if found:
        print()
        print(found)
    if html:
        path = write_html(read, html)
        print(f"\nwrote {path}")
    return 0


async def _no_thread(view: Any, thread: str) -> NoReturn:
    """Raise the usage error for a thread the store does not hold, naming some it does."""
    threads = await view.alist_threads()
    known = ", ".join(repr(t) for t in threads[:10]) or "none"
    raise UsageError(f"no thread {thread!r} in this store (threads: {known})")


def _flags(interrupts: int, errors: int, failure: str) -> str:
    """The flags column of one checkpoint: interrupts, failed tasks and their class."""
    parts = [f"{interrupts} interrupt(s)" if interrupts else ""]
    parts.append(f"{errors} failed" if errors else "")
    parts.append(f"[{failure}]" if failure else "")
    return " ".join(p for p in parts if p)


async def _print_subgraphs(
    view: Any, thread: str, namespaces: dict[str, str | None], listed: list[Any] | None
) -> None:
    """Each subgraph namespace of the thread, indented under its parent: a header naming the
    node, its task and the checkpoint it ran from, then its own checkpoint tree (from the
    thread's ``listed`` checkpoints when read, else from the outline)."""
    from durable_debug.checkpoint.names import NS_END, NS_SEP
    from durable_debug.inspect import aread_thread
    from durable_debug.inspect.dag import DagReader, dag_data_of
    from durable_debug.inspect.text import short_id, tree_text

    for ns, parent in namespaces.items():
        depth = ns.count(NS_SEP) + 1
        node, _, task = ns.rpartition(NS_SEP)[2].partition(NS_END)
        where = f", from checkpoint {short_id(parent)}" if parent else ""
        indent = "    " * depth
        print(f"\n{indent[2:]}└─ subgraph {node!r} (task {short_id(task)}{where}): {ns}")
        address = {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
        if listed is None:
            dag = await DagReader(view, address).aread()
        else:
            dag = dag_data_of(await aread_thread(view, address, listed=listed))
        for line in tree_text(dag).splitlines():
            print(f"{indent}{line}")


def history_text(frame: Any) -> str:
    """The history table, narrowed to what fits a terminal."""
    from durable_debug.inspect.text import short_id

    table = frame[["step", "source", "checkpoint_id", "parent_id", "next", "writers"]].copy()
    table["checkpoint_id"] = table["checkpoint_id"].map(short_id)
    table["parent_id"] = table["parent_id"].map(lambda p: short_id(p) if isinstance(p, str) else "")
    table["next"] = table["next"].map(", ".join)
    table["writers"] = table["writers"].map(", ".join)
    table["flags"] = [
        _flags(i, e, c)
        for i, e, c in zip(frame["interrupts"], frame["errors"], frame["failure"], strict=True)
    ]
    table = table.rename(columns={"checkpoint_id": "checkpoint", "parent_id": "parent"})
    return str(table.to_string(index=False))


async def _print_threads(saver: BaseCheckpointSaver) -> int:
    """Print one line per thread; a thread that cannot be read is marked ``broken`` with the
    reason and the listing goes on. Returns 2 when a thread was broken, else 0."""
    from durable_debug.inspect.listing import athread_listing, listing_text

    rows = await athread_listing(saver)
    if not rows:
        print("no threads in this store")
        return 0
    print(listing_text(rows))
    broken = sum(row.broken for row in rows)
    if broken:
        print(
            f"durable-debug: error: {broken} of {len(rows)} thread"
            f"{'s' if len(rows) != 1 else ''} could not be read (marked broken above)",
            file=sys.stderr,
        )
        return 2
    return 0


# -- health -----------------------------------------------------------------------------------


def _add_health(commands: Any) -> None:
    health = commands.add_parser(
        "health",
        help="print a store's health: write latency, stuck and crashed threads, failures, size",
        description="Read a checkpoint store without the graph's code and print its health: "
        "checkpoint write latency p50/p95, threads waiting on an interrupt longer than the "
        "SLA, runs that died mid-step, resume-after-failure success rate, failures by class, "
        "growth per day and the largest threads.",
    )
    health.add_argument("store", metavar="DB_OR_URL", help="a SQLite file or a saver URL")
    health.add_argument(
        "--sla",
        type=float,
        default=None,
        metavar="SECONDS",
        help="list threads waiting on an interrupt longer than this "
        "(default: durable_debug.inspect.health.DEFAULT_SLA)",
    )
    health.add_argument("--top", type=int, default=10, help="largest threads to list")
    health.set_defaults(run=_health)


def _health(args: argparse.Namespace) -> int:
    import datetime as dt

    from durable_debug.inspect.health import DEFAULT_SLA, HEALTH_TABLES, health

    sla = DEFAULT_SLA if args.sla is None else dt.timedelta(seconds=args.sla)
    if sla < dt.timedelta(0) or args.top < 0:
        raise UsageError("--sla and --top must not be negative")
    saver = _open_store(args.store)
    if saver is None:
        raise UsageError(f"{args.store} holds no checkpoint tables: nothing to report")
    try:
        report = health(saver, sla=sla, top=args.top)
    finally:
        _close(saver)
    for i, name in enumerate(HEALTH_TABLES):
        frame = report[name]
        print(("\n" if i else "") + f"== {name} ==")
        print(frame.to_string(index=False) if len(frame) else "(none)")
    damaged = len(report["damaged"])
    if damaged:
        print(
            f"durable-debug: error: {damaged} thread(s) could not be read (listed under "
            "damaged); the tables cover every other thread. `durable-debug check` verifies "
            "the whole store.",
            file=sys.stderr,
        )
        return 2
    return 0


# -- check ------------------------------------------------------------------------------------


def _add_check(commands: Any) -> None:
    check = commands.add_parser(
        "check",
        help="verify a whole store: the file's integrity and every checkpoint reassembled",
        description="Read every checkpoint of every thread (all namespaces), reassembling its "
        "values and pending writes, and for a SQLite file run SQLite's integrity check first. "
        "Prints one line per damaged thread with why; exit status 2 when anything is damaged.",
    )
    check.add_argument("store", metavar="DB_OR_URL", help="a SQLite file or a saver URL")
    check.set_defaults(run=_check)


def _check(args: argparse.Namespace) -> int:
    from durable_debug._sync import run_sync
    from durable_debug.inspect.health import acheck_store

    saver = _open_store(args.store)
    if saver is None:
        raise UsageError(f"{args.store} holds no checkpoint tables: nothing to check")
    try:
        report = run_sync(acheck_store(saver))
    finally:
        _close(saver)
    for problem in report.file_problems:
        print(f"file: {problem}")
    for thread_id, error in report.damaged:
        print(f"{thread_id}: damaged: {error}")
    summary = (
        f"{report.threads} thread(s), {report.checkpoints} checkpoint(s) read; "
        f"{len(report.damaged)} damaged thread(s)"
    )
    if report.file_problems:
        summary += f"; the file has {len(report.file_problems)} problem(s)"
    print(summary, file=sys.stderr)
    return 2 if report.damaged or report.file_problems else 0


# -- sweep ------------------------------------------------------------------------------------


def _add_sweep(commands: Any) -> None:
    sweep = commands.add_parser(
        "sweep",
        help="fail or delete threads stuck on an interrupt; prune old checkpoints",
        description="Apply a policy to threads waiting on an interrupt longer than "
        "--older-than (fail: record an InterruptExpired error on the waiting tasks; delete: "
        "delete the thread), and with --keep-last N delete all but the last N checkpoints of "
        "each branch (fork points and heads stay). --dry-run lists what would go and the "
        "bytes it frees.",
    )
    sweep.add_argument("store", metavar="DB_OR_URL", help="a SQLite file or a saver URL")
    sweep.add_argument("--older-than", type=float, metavar="SECONDS", help="interrupt age")
    sweep.add_argument("--policy", choices=["fail", "delete"], help="what to do with them")
    sweep.add_argument("--keep-last", type=int, metavar="N", help="checkpoints kept per branch")
    sweep.add_argument("--dry-run", action="store_true", help="change nothing, list what would")
    sweep.set_defaults(run=_sweep)


def _sweep(args: argparse.Namespace) -> int:
    import datetime as dt

    from durable_debug.inspect.retention import prune, sweep

    if (args.older_than is None) != (args.policy is None):
        raise UsageError("--older-than and --policy go together")
    if args.older_than is None and args.keep_last is None:
        raise UsageError("nothing to do: give --older-than and --policy, or --keep-last")
    if args.older_than is not None and args.older_than < 0:
        raise UsageError("--older-than must not be negative")
    if args.keep_last is not None and args.keep_last < 1:
        raise UsageError("--keep-last must be at least 1")
    saver = _open_store(args.store, write=True)
    if saver is None:
        raise UsageError(f"{args.store} holds no checkpoint tables: nothing to sweep")
    damaged = 0
    try:
        if args.policy is not None:
            age = dt.timedelta(seconds=args.older_than)
            frame = sweep(saver, older_than=age, policy=args.policy, dry_run=args.dry_run)
            print("== stuck threads ==")
            print(frame.to_string(index=False) if len(frame) else "(none)")
            damaged += int(frame["action"].str.startswith("damaged").sum())
        if args.keep_last is not None:
            frame = prune(saver, keep_last=args.keep_last, dry_run=args.dry_run)
            print("== pruned checkpoints ==")
            print(frame.to_string(index=False) if len(frame) else "(none)")
            verb = "would free" if args.dry_run else "freed"
            count = int(frame["checkpoint_id"].notna().sum())  # skipped threads have none
            print(f"{count} checkpoint(s), {int(frame['bytes'].sum())} bytes freed ({verb})")
            damaged = max(damaged, int(frame["action"].str.startswith("damaged").sum()))
    finally:
        _close(saver)
    if damaged:
        print(
            f"durable-debug: error: {damaged} thread(s) could not be read (marked damaged "
            "above) and were left as they are; every other thread was swept",
            file=sys.stderr,
        )
        return 2
    return 0


# -- recover ----------------------------------------------------------------------------------


def _add_recover(commands: Any) -> None:
    recover = commands.add_parser(
        "recover",
        help="resume (or list) the threads whose run died mid-step",
        description="Find the threads of a store whose last run died while it held the thread "
        "(its lease expired without being given back) and resume each of them once, under "
        "the thread's lease, with the graph's code. Safe to run on many workers at once. "
        "With --list, only list them (no graph code needed): each with the checkpoint and "
        "step its run had reached and the tasks that were running.",
    )
    recover.add_argument("store", metavar="DB_OR_URL", help="a SQLite file or a saver URL")
    recover.add_argument(
        "--list",
        action="store_true",
        help="list the crashed threads instead of resuming them (no --graph needed)",
    )
    recover.add_argument(
        "--graph",
        metavar="MODULE:NAME",
        help="the graph to resume them with: a StateGraph, a compiled graph, or a function "
        "without arguments returning one (it is compiled with the store's saver)",
    )
    recover.add_argument("--limit", type=int, help="resume at most this many threads")
    recover.set_defaults(run=_recover)


def _recover(args: argparse.Namespace) -> int:
    """``durable-debug recover``: one line per thread, ``<thread> <outcome> [error]``."""
    from durable_debug.graph import recover

    if args.list:
        return _list_crashed(args.store)
    if args.graph is None:
        raise UsageError("give --graph MODULE:NAME to resume the crashed threads, or --list")
    target = _graph_target(args.graph)
    saver = _open_store(args.store, write=True)
    try:
        done = recover(_compiled_on(target, saver, args.graph), limit=args.limit)
    finally:
        _close(saver)
    for item in done:
        print(" ".join(x for x in (item.thread_id, item.outcome, item.error) if x))
    print(f"{len(done)} thread(s) recovered", file=sys.stderr)
    return 0


def _graph_target(spec: str) -> Any:
    """What ``--graph MODULE:NAME`` names: a StateGraph, a compiled graph, or what a function
    without arguments returns."""
    import importlib

    from durable_debug.graph import CompiledStateGraph, StateGraph

    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise UsageError(f"--graph {spec!r}: give it as MODULE:NAME")
    try:
        target: Any = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"--graph {spec!r}: {exc}") from None
    if callable(target) and not isinstance(target, (StateGraph, CompiledStateGraph)):
        target = target()
    return target


def _compiled_on(
    target: object, saver: BaseCheckpointSaver, spec: str
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """``target`` (see :func:`_graph_target`) compiled with ``saver`` as its checkpointer."""
    from durable_debug.graph import CompiledStateGraph, StateGraph

    if isinstance(target, CompiledStateGraph):
        return target.builder.compile(
            checkpointer=saver,
            interrupt_before=list(target.interrupt_before),
            interrupt_after=list(target.interrupt_after),
            name=target.name,
        )
    if isinstance(target, StateGraph):
        return target.compile(checkpointer=saver)
    raise UsageError(
        f"--graph {spec!r} is a {type(target).__name__}, not a StateGraph or a compiled graph"
    )


def _add_replay_check(commands: Any) -> None:
    check = commands.add_parser(
        "replay-check",
        help="run a thread's recorded tasks again on the current code and compare their writes",
        description="Run every task of a thread (all branches) that finished again, on the "
        "graph's code as it is now, with its recorded input and its recorded model and tool "
        "calls, and compare what it writes with what it wrote. Nothing is saved. Exit status "
        "1 when a task writes something else now.",
    )
    check.add_argument("store", metavar="DB_OR_URL", help="a SQLite file or a saver URL")
    check.add_argument("thread", help="the thread to check")
    check.add_argument(
        "--graph",
        metavar="MODULE:NAME",
        required=True,
        help="the graph's code: a StateGraph, a compiled graph, or a function without "
        "arguments returning one (it is compiled with the store's saver)",
    )
    check.set_defaults(run=_replay_check)


def _replay_check(args: argparse.Namespace) -> int:
    """``durable-debug replay-check``: the report of ``inspect.replay_check``."""
    from durable_debug.inspect.replay import replay_check, replay_text
    from durable_debug.inspect.thread import thread_config

    target = _graph_target(args.graph)
    saver = _open_store(args.store)
    if saver is None:
        raise UsageError(f"{args.store} holds no checkpoint tables: nothing to check")
    try:
        report = replay_check(_compiled_on(target, saver, args.graph), thread_config(args.thread))
    finally:
        _close(saver)
    if not report.checked:
        raise UsageError(f"thread {args.thread!r} has no finished task in {args.store}")
    print(replay_text(report))
    return 0 if report.ok else 1


def _list_crashed(store: str) -> int:
    """``durable-debug recover --list``: one line per crashed thread, from the store alone."""
    from durable_debug.inspect.health import crashed_threads

    saver = _open_store(store)
    if saver is None:
        print("0 crashed thread(s)", file=sys.stderr)
        return 0
    try:
        frame = crashed_threads(saver)
    finally:
        _close(saver)
    for row in frame.to_dict("records"):
        if row["checkpoint_id"] is None:
            print(f"{row['thread_id']} crashed before its first checkpoint")
            continue
        since = row["since"].isoformat(timespec="seconds") if row["since"] is not None else "?"
        print(
            f"{row['thread_id']} crashed in step {int(row['step']) + 1} "
            f"({row['tasks'] or 'nothing left to run'}), checkpoint {row['checkpoint_id']} "
            f"saved {since}"
        )
    print(f"{len(frame)} crashed thread(s)", file=sys.stderr)
    return 0


def _progress_err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _close(saver: BaseCheckpointSaver) -> None:
    """Close what :func:`_open_store` opened (a reader without ``close`` holds nothing)."""
    close = getattr(saver, "close", None)
    if callable(close):
        close()


def _open_store(target: str, *, write: bool = False) -> Any:
    """A reader for a path or URL (None for a database without checkpoint tables), or
    :class:`UsageError`.

    A SQLite file or PostgreSQL schema is read in the layout its tables have: durable_debug's
    own, or LangGraph's (read without LangGraph, read-only). A SQLite file is opened without
    being changed (no journal mode switch, no migration, no file left beside it) unless the
    command ``write``s (sweep, recover).
    """
    from durable_debug.checkpoint import saver_from_url
    from durable_debug.checkpoint.url import sqlite_url_path

    if "://" in target:
        scheme = target.partition("://")[0].lower()
        try:
            if scheme == "sqlite":
                path = sqlite_url_path(target)
                if path == ":memory:":
                    raise UsageError(f"{target} is an empty in-memory database: no threads")
                return _open_sqlite_file(Path(path), target, write=write)
            if scheme in ("postgresql", "postgres"):
                return _open_postgres(target)
            return saver_from_url(target)
        except (ValueError, ImportError) as exc:
            raise UsageError(str(exc)) from None
    return _open_sqlite_file(Path(target), target, write=write)


def _open_sqlite_file(path: Path, shown: str, *, write: bool) -> Any:
    from durable_debug.checkpoint import SqliteSaver
    from durable_debug.checkpoint.langgraph_sqlite import LangGraphSqliteReader
    from durable_debug.checkpoint.readonly import ReadOnlySqliteSaver

    layout = _sqlite_layout(path, shown)
    if layout == "langgraph":
        return LangGraphSqliteReader(path)
    if layout == "empty":
        return None
    return SqliteSaver(str(path)) if write else ReadOnlySqliteSaver(path)


def _open_postgres(url: str) -> Any:
    from durable_debug.checkpoint import PostgresSaver
    from durable_debug.checkpoint.langgraph_postgres import LangGraphPostgresReader, postgres_layout

    layout = postgres_layout(url)
    if layout == "langgraph":
        return LangGraphPostgresReader(url)
    if layout is None:  # no checkpoint tables: nothing to read, and none are created
        return None
    return PostgresSaver(url)


def _sqlite_layout(path: Path, shown: str) -> str:
    """``"durable_debug"``, ``"langgraph"`` or ``"empty"`` for a SQLite file, read without
    changing it; :class:`UsageError` for anything else."""
    from durable_debug.checkpoint.langgraph_sqlite import open_read_only, sqlite_layout

    if not path.exists():
        raise UsageError(f"no such file: {shown}")
    if path.is_dir():
        raise UsageError(f"{path} is a directory, not a SQLite file")
    from durable_debug.checkpoint._files import access_problem
    from durable_debug.checkpoint._schema import DatabaseSetupError

    problem = access_problem(path, write=False)
    if problem is not None:
        raise UsageError(problem)
    if path.stat().st_size == 0:
        raise UsageError(f"{path} is an empty file (0 bytes): it holds no checkpoints")
    try:
        conn = open_read_only(path)
    except DatabaseSetupError as exc:
        raise UsageError(str(exc)) from None
    except Exception:
        raise UsageError(f"{path} is not a SQLite database") from None
    try:
        layout = sqlite_layout(conn)
    finally:
        conn.close()
    if layout is None:
        raise UsageError(
            f"{path} is a SQLite database but not a durable_debug checkpoint store, nor one "
            "LangGraph's SqliteSaver wrote (it has neither layout's tables)"
        )
    return layout


def _check_store_file(path: Path) -> None:
    """Refuse, without changing it, a file the demo must not write into."""
    layout = _sqlite_layout(path, str(path))
    if layout == "langgraph":
        raise UsageError(
            f"{path} holds LangGraph's checkpoints; the demo writes durable_debug's own "
            "tables, so give it another --db"
        )


if __name__ == "__main__":
    sys.exit(main())
