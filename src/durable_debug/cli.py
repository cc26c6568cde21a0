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
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from typing_extensions import TypedDict

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
    _add_recover(commands)
    return parser


# -- demo -------------------------------------------------------------------------------------


class Release(TypedDict, total=False):
    """State of the demo graph: a small release note written section by section."""

    topic: str
    sections: list[str]
    drafts: Annotated[list[str], operator.add]
    decision: str
    published: str


def demo_graph(saver: Any) -> Any:
    """plan → write (one Send per section, in parallel) → review (asks a human) → publish.

    The first attempt at the "body" section fails, as a flaky model call would.
    """
    from durable_debug import START, Send, StateGraph, interrupt

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
    from durable_debug import Command, SqliteSaver
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
            (question,) = paused["__interrupt__"]
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
    try:
        return asyncio.run(_run_inspect(saver, args.thread, args.html))
    finally:
        close = getattr(saver, "close", None)
        if close is not None:
            close()


async def _run_inspect(saver: Any, thread: str | None, html: str | None) -> int:
    from durable_debug.inspect import adag_data, aexport_html, ahistory_frame
    from durable_debug.inspect.stored import SaverView
    from durable_debug.inspect.text import tree_text

    view = SaverView(saver)
    threads = await view.alist_threads()
    if thread is None:
        if not threads:
            print("no threads in this store")
            return 0
        if html:
            raise UsageError("--html needs --thread: say which thread to export")
        return await _print_threads(view, threads)
    if thread not in threads:
        known = ", ".join(repr(t) for t in threads[:10]) or "none"
        raise UsageError(f"no thread {thread!r} in this store (threads: {known})")
    cfg = {"configurable": {"thread_id": thread}}
    _progress_err(f"reading thread {thread!r}…")
    print(tree_text(await adag_data(view, cfg)))
    print()
    frame = await ahistory_frame(view, cfg)
    print(history_text(frame))
    if html:
        path = await aexport_html(view, cfg, html)
        print(f"\nwrote {path}")
    return 0


def history_text(frame: Any) -> str:
    """The history table, narrowed to what fits a terminal."""
    from durable_debug.inspect.text import short_id

    table = frame[["step", "source", "checkpoint_id", "parent_id", "next", "writers"]].copy()
    table["checkpoint_id"] = table["checkpoint_id"].map(short_id)
    table["parent_id"] = table["parent_id"].map(lambda p: short_id(p) if isinstance(p, str) else "")
    table["next"] = table["next"].map(", ".join)
    table["writers"] = table["writers"].map(", ".join)
    table["flags"] = [
        " ".join(f for f in (f"{i} interrupt(s)" if i else "", f"{e} failed" if e else "") if f)
        for i, e in zip(frame["interrupts"], frame["errors"], strict=True)
    ]
    table = table.rename(columns={"checkpoint_id": "checkpoint", "parent_id": "parent"})
    return str(table.to_string(index=False))


async def _print_threads(view: Any, threads: list[str]) -> int:
    """Print one line per thread; a thread that cannot be read is marked ``broken`` with the
    reason and the listing goes on. Returns 2 when a thread was broken, else 0."""
    from durable_debug.checkpoint import DurableDebugError, StoreUnavailableError

    print(f"{len(threads)} thread{'s' if len(threads) != 1 else ''}:")
    print(f"  {'thread':<24} {'checkpoints':>11}  {'step':>4}  status")
    broken = 0
    for i, thread in enumerate(threads, 1):
        if i % 50 == 0:
            _progress_err(f"… {i} of {len(threads)} threads")
        count: int | str
        try:
            count, step, status = await _thread_summary(view, thread)
        except StoreUnavailableError:
            raise  # the store itself is gone: the other threads cannot be read either
        except Exception as exc:
            broken += 1
            count, step = "?", ""
            status = f"broken: {one_line(exc, known=isinstance(exc, DurableDebugError))}"
        shown = thread if thread.isprintable() else repr(thread)  # no terminal escapes
        print(f"  {shown:<24} {count:>11}  {step:>4}  {status}")
    if broken:
        print(
            f"durable-debug: error: {broken} of {len(threads)} thread"
            f"{'s' if len(threads) != 1 else ''} could not be read (marked broken above)",
            file=sys.stderr,
        )
        return 2
    return 0


async def _thread_summary(view: Any, thread: str) -> tuple[int, Any, str]:
    """(checkpoints, step, status) of one thread."""
    cfg = {"configurable": {"thread_id": thread}}
    count = 0
    async for _ in view.checkpointer.alist(cfg):
        count += 1
    snap = await view.aget_state(cfg)
    step = (snap.metadata or {}).get("step", "")
    if snap.interrupts:
        status = f"paused on {len(snap.interrupts)} interrupt(s) at {', '.join(snap.next)}"
    elif any(t.error for t in snap.tasks if t.result is None):
        status = f"failed at {', '.join(snap.next)}"
    elif snap.next:
        status = f"next {', '.join(snap.next)}"
    else:
        status = "done"
    return count, step, status


# -- recover ----------------------------------------------------------------------------------


def _add_recover(commands: Any) -> None:
    recover = commands.add_parser(
        "recover",
        help="resume the threads whose run died mid-step",
        description="Find the threads of a store whose last run died while it held the thread "
        "(its lease expired without being given back) and resume each of them once, under "
        "the thread's lease, with the graph's code. Safe to run on many workers at once.",
    )
    recover.add_argument("store", metavar="DB_OR_URL", help="a SQLite file or a saver URL")
    recover.add_argument(
        "--graph",
        required=True,
        metavar="MODULE:NAME",
        help="the graph to resume them with: a StateGraph, a compiled graph, or a function "
        "without arguments returning one (it is compiled with the store's saver)",
    )
    recover.add_argument("--limit", type=int, help="resume at most this many threads")
    recover.set_defaults(run=_recover)


def _recover(args: argparse.Namespace) -> int:
    """``durable-debug recover``: one line per thread, ``<thread> <outcome> [error]``."""
    import importlib

    from durable_debug.graph import CompiledStateGraph, StateGraph, recover

    module_name, _, name = args.graph.partition(":")
    if not module_name or not name:
        raise UsageError(f"--graph {args.graph!r}: give it as MODULE:NAME")
    try:
        target: Any = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"--graph {args.graph!r}: {exc}") from None
    if callable(target) and not isinstance(target, (StateGraph, CompiledStateGraph)):
        target = target()
    saver = _open_store(args.store)
    try:
        if isinstance(target, CompiledStateGraph):
            graph = target.builder.compile(
                checkpointer=saver,
                interrupt_before=list(target.interrupt_before),
                interrupt_after=list(target.interrupt_after),
                name=target.name,
            )
        elif isinstance(target, StateGraph):
            graph = target.compile(checkpointer=saver)
        else:
            raise UsageError(
                f"--graph {args.graph!r} is a {type(target).__name__}, not a StateGraph or a "
                "compiled graph"
            )
        done = recover(graph, limit=args.limit)
    finally:
        close = getattr(saver, "close", None)
        if callable(close):
            close()
    for item in done:
        print(" ".join(x for x in (item.thread_id, item.outcome, item.error) if x))
    print(f"{len(done)} thread(s) recovered", file=sys.stderr)
    return 0


def _progress_err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _open_store(target: str) -> Any:
    """A saver for a path or URL, or :class:`UsageError` saying why not."""
    from durable_debug.checkpoint import SqliteSaver, saver_from_url

    if "://" in target:
        try:
            return saver_from_url(target)
        except (ValueError, ImportError) as exc:
            raise UsageError(str(exc)) from None
    path = Path(target)
    if not path.exists():
        raise UsageError(f"no such file: {target}")
    _check_store_file(path)
    return SqliteSaver(str(path))


def _check_store_file(path: Path) -> None:
    """Refuse, without changing it, a file that is not a durable_debug SQLite store."""
    if path.is_dir():
        raise UsageError(f"{path} is a directory, not a SQLite file")
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    except sqlite3.DatabaseError:
        raise UsageError(f"{path} is not a SQLite database") from None
    if tables and "checkpoint_migrations" not in tables:
        raise UsageError(
            f"{path} is a SQLite database but not a durable_debug checkpoint store "
            "(it has no checkpoint_migrations table)"
        )


if __name__ == "__main__":
    sys.exit(main())
