"""The IPython extension: ``%%graph`` runs a cell with the execution recorder on.

    In [1]: %load_ext durable_debug

    In [2]: %%graph --counts runs
       ...: await g.ainvoke({"plan": "deploy", "approved": ""}, cfg)     # gate interrupts
       ...: await g.ainvoke(Command(resume="APPROVED"), cfg)
      thread     node  executions  reruns  errors  interrupts             summary
    0 hitl-1  prepare           1       0       0           0           prepare 1
    1 hitl-1     gate           2       1       0           1  gate 2 (re-ran 1×)
    <the TimeTravel widget for hitl-1; the checkpoint table until the widget is installed>
    Out[2]: {'plan': 'deploy', 'approved': 'APPROVED'}

    In [3]: runs.loc[runs.node == "gate", "reruns"].item()            # 1
    In [4]: %checkpoints hitl-1                                       # history_frame
    In [5]: %diff 1f0a3c 1f0a3d --paths                               # diff_frame
    In [6]: %replay_check hitl-1                   # recorded tasks rerun on the code now
    In [7]: %unload_ext durable_debug                                 # all of it gone

``%%graph [--thread ID] [--counts NAME] [--no-widget] [--graph NAME]``: the cell runs as a
normal cell does — top-level ``await`` works, the names it defines stay defined, its last
expression is shown — while a :class:`~durable_debug.inspect.Recorder` counts node executions.
Afterwards: the executions per node of every thread the cell touched (counted over all
``%%graph`` cells of the session, so a resume in a later cell shows ``gate 2 (re-ran 1×)``),
then the widget for the last thread touched (or ``--thread``). A cell that raises shows the
counts up to the failure, then the exception as usual.

How: a magic cannot run the cell itself, since ``run_cell`` from inside a cell magic fails under
the kernel's running event loop. So an input transformer turns the ``%%graph`` line into a
marker statement, and an AST transformer wraps the rest of the cell in
``[async] with <recorder>:`` — IPython then runs it like any cell, top-level await included.
The logic lives in :class:`GraphSession` (no IPython needed); the rest only wires it up.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import logging
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol, TypeVar, cast

import pandas as pd

from durable_debug._sync import run_sync
from durable_debug.inspect.access import GraphLike
from durable_debug.inspect.diff import adiff_frame
from durable_debug.inspect.findings import frame_findings_text
from durable_debug.inspect.frames import ahistory_frame
from durable_debug.inspect.locate import afind_graph, is_compiled_graph
from durable_debug.inspect.recorder import Recorder
from durable_debug.inspect.replay import ReplayCheck, areplay_check, replay_text
from durable_debug.inspect.thread import thread_config

__all__ = [
    "CellOptions",
    "CellReport",
    "GraphCell",
    "GraphSession",
    "Note",
    "load_ipython_extension",
    "unload_ipython_extension",
]

logger = logging.getLogger(__name__)

MARKER = "%%graph"
"""The input transformer leaves the ``%%graph`` line as a string statement starting with this,
which reads well in tracebacks and is harmless if it ever runs as it is."""


@dataclass(frozen=True)
class CellOptions:
    """The options of one ``%%graph`` cell."""

    thread: str | None = None
    """Show this thread (default: the last thread the cell touched)."""
    counts: str | None = None
    """Store the counts DataFrame under this name in the user namespace."""
    widget: bool = True
    """Show the widget (or the checkpoint table) after the counts."""
    graph: str | None = None
    """Name of the compiled graph in the namespace (default: found by thread)."""


@dataclass
class CellReport:
    """What a ``%%graph`` cell shows afterwards."""

    counts: pd.DataFrame
    """Executions per node for the threads shown."""
    thread_id: str | None
    """The thread the view is for (None when no node ran)."""
    graph: GraphLike | None = None
    """The compiled graph holding that thread."""
    table: pd.DataFrame | None = None
    """The thread's checkpoint table, shown when the widget is not installed."""
    note: str | None = None
    """Why no view could be shown (e.g. no graph in the namespace holds the thread)."""


class Note(str):
    """A line of text to display without quotes (``repr`` is the text itself)."""

    def __repr__(self) -> str:
        return str(self)


class GraphSession:
    """The extension's state, usable without IPython: one recorder for the session, the
    namespace graphs are found in, and a ``display`` function."""

    def __init__(
        self,
        namespace: MutableMapping[str, Any],
        display: Callable[[Any], Any] = print,
        widget_class: Callable[[], Any] | None = None,
    ) -> None:
        self.namespace = namespace
        self.display = display
        self.recorder = Recorder()
        self.last_thread: str | None = None
        self.current: GraphCell | None = None
        """The ``%%graph`` cell running now (it holds the cell's last value until shown)."""
        self._widget_class = widget_class or time_travel_class

    def cell(self, options: CellOptions) -> GraphCell:
        """A context manager (``with`` or ``async with``) that records one cell."""
        return GraphCell(self, options)

    # -- after a cell ------------------------------------------------------------------------

    async def areport(self, mark: int, options: CellOptions) -> CellReport:
        """Collect what to show for the executions recorded after ``mark``."""
        touched = [t for t in self.recorder.threads_since(mark) if t is not None]
        shown = [options.thread] if options.thread else touched
        report = CellReport(self.recorder.counts_frame(shown), shown[-1] if shown else None)
        if report.thread_id is not None:
            self.last_thread = report.thread_id
        if report.thread_id is None or not options.widget:
            return report
        try:
            report.graph = await self.agraph(report.thread_id, options.graph)
            if self._widget_class() is None:
                report.table = await ahistory_frame(report.graph, thread_config(report.thread_id))
        except (LookupError, TypeError, ValueError) as exc:
            report.note = f"durable_debug: cannot show thread {report.thread_id!r}: {exc}"
        return report

    def show(self, report: CellReport, options: CellOptions) -> None:
        """Display a report: counts, then the widget (or the checkpoint table)."""
        if options.counts:
            self.namespace[options.counts] = report.counts
        if report.counts.empty:
            scope = f"for thread {options.thread!r}" if options.thread else "in this cell"
            self.display(Note(f"durable_debug: no graph node executed {scope}."))
            return
        self.display(report.counts)
        if report.note:
            self.display(Note(report.note))
        elif report.graph is not None and report.thread_id is not None:
            widget = self._widget_class()
            if widget is None:
                self.display(report.table)
            else:
                name = next(
                    (
                        key
                        for key, value in reversed(list(self.namespace.items()))
                        if value is report.graph and key.isidentifier() and not key.startswith("_")
                    ),
                    None,
                )
                self.display(_make_widget(widget, report, self.recorder, name))

    # -- line magics -------------------------------------------------------------------------

    async def agraph(self, thread_id: str, name: str | None = None) -> Any:
        """The compiled graph called ``name`` in the namespace, or the one holding the thread."""
        if name is not None:
            graph = self.namespace.get(name)
            if not is_compiled_graph(graph):
                raise LookupError(
                    f"--graph {name}: the namespace has no compiled graph with a checkpointer "
                    f"called {name!r}."
                )
            return graph
        nodes = self.recorder.counts(thread_id)
        return (await afind_graph(self.namespace, thread_id, nodes=nodes))[1]

    def thread_or_last(self, thread_id: str | None) -> str:
        """``thread_id``, or the last thread a ``%%graph`` cell showed."""
        if thread_id:
            return thread_id
        if self.last_thread is None:
            raise LookupError(
                "No thread given and no %%graph cell has run a graph yet: name the thread, "
                "e.g. %checkpoints demo-1."
            )
        return self.last_thread

    async def acheckpoints(self, thread_id: str | None, graph: str | None) -> pd.DataFrame:
        """The checkpoint table of a thread (``%checkpoints``)."""
        thread = self.thread_or_last(thread_id)
        return await ahistory_frame(await self.agraph(thread, graph), thread_config(thread))

    async def areplay_check(self, thread_id: str | None, graph: str | None) -> ReplayCheck:
        """Every recorded task of a thread run again on the code now (``%replay_check``)."""
        thread = self.thread_or_last(thread_id)
        return await areplay_check(await self.agraph(thread, graph), thread_config(thread))

    async def adiff(
        self, a: str, b: str, thread_id: str | None, graph: str | None, paths: bool
    ) -> pd.DataFrame:
        """The diff between two checkpoints of a thread (``%diff``)."""
        thread = self.thread_or_last(thread_id)
        found = await self.agraph(thread, graph)
        return await adiff_frame(a, b, found, thread_config(thread), paths=paths)


class GraphCell:
    """Records one cell: starts the session's recorder on entry; on exit stops it and shows
    the counts and the view (also when the cell raised, before the exception)."""

    def __init__(self, session: GraphSession, options: CellOptions) -> None:
        self.session = session
        self.options = options
        self._mark = 0
        self._kept: Any = None

    def keep(self, value: Any) -> None:
        """Hold the cell's last expression value, so it is shown after the counts."""
        self._kept = value

    def result(self) -> Any:
        """The cell's last expression value (once)."""
        value, self._kept = self._kept, None
        return value

    def __enter__(self) -> GraphCell:
        self._mark = len(self.session.recorder.executions)
        self.session.recorder.start()
        self.session.current = self
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.session.recorder.stop()
        self._report(lambda: run_sync(self.session.areport(self._mark, self.options)), exc)

    async def __aenter__(self) -> GraphCell:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.session.recorder.stop()
        built = asyncio.ensure_future(self.session.areport(self._mark, self.options))
        await asyncio.wait([built])  # its outcome, an error included, is read by _report
        self._report(built.result, exc)

    def _report(self, build: Callable[[], CellReport], exc: BaseException | None) -> None:
        """Show the counts and the view ``build`` returns. If building fails, the error
        propagates, unless the cell itself raised: then say so in one line and let the
        cell's exception go on."""
        try:
            report = build()
        except Exception as error:
            if exc is None:
                raise
            # The cell's own exception matters more; say what went wrong here, then let it go.
            self.session.display(Note(f"durable_debug: cannot show the counts: {error!r}"))
            return
        self.session.show(report, self.options)


def time_travel_class() -> Any:
    """``durable_debug.TimeTravel`` when the widget is installed, else None."""
    try:
        from durable_debug.widget import TimeTravel
    except ImportError:
        return None
    return TimeTravel


def _make_widget(
    widget_class: Any, report: CellReport, recorder: Recorder, graph_name: str | None = None
) -> Any:
    """The widget for the report's thread, given the counts and the graph's variable name when
    the widget class takes them."""
    config = thread_config(str(report.thread_id))
    parameters: Mapping[str, inspect.Parameter]
    try:
        parameters = inspect.signature(widget_class).parameters
    except (TypeError, ValueError):
        parameters = {}
    extra: dict[str, Any] = {}
    if "counts" in parameters:
        extra["counts"] = recorder.counts(report.thread_id)
    if "graph_name" in parameters and graph_name:
        extra["graph_name"] = graph_name
    return widget_class(report.graph, config, **extra)


# --- the IPython wiring ---------------------------------------------------------------------

_SESSIONS: dict[int, tuple[GraphSession, Any, Any, Any]] = {}


def load_ipython_extension(ip: Any) -> None:
    """``%load_ext durable_debug``: register the magics and the two transformers."""
    if id(ip) in _SESSIONS:
        return
    from IPython.display import display

    session = GraphSession(ip.user_ns, display)
    magics = _magics_class()(ip, session)
    ip.register_magics(magics)
    ast_transformer = GraphCellTransformer()
    ip.input_transformers_cleanup.append(rewrite_graph_cell)
    ip.ast_transformers.append(ast_transformer)
    _SESSIONS[id(ip)] = (session, magics, ast_transformer, ip)


def unload_ipython_extension(ip: Any) -> None:
    """``%unload_ext durable_debug``: remove exactly what loading added."""
    entry = _SESSIONS.pop(id(ip), None)
    if entry is None:
        return
    session, magics, ast_transformer, _ = entry
    session.recorder.stop()
    if rewrite_graph_cell in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.remove(rewrite_graph_cell)
    if ast_transformer in ip.ast_transformers:
        ip.ast_transformers.remove(ast_transformer)
    manager = ip.magics_manager
    for kind, names in magics.magics.items():
        for name in names:
            registered = manager.magics[kind].get(name)
            if getattr(registered, "__self__", None) is magics:
                del manager.magics[kind][name]
    if manager.registry.get(type(magics).__name__) is magics:
        del manager.registry[type(magics).__name__]


def rewrite_graph_cell(lines: list[str]) -> list[str]:
    """Input transformer: turn a leading ``%%graph ARGS`` line into the string statement
    ``'%%graph ARGS'``, the marker :class:`GraphCellTransformer` looks for.

    The marker keeps the cell valid Python (so IPython's own transformers and top-level-await
    check still apply to the body) and keeps line numbers in tracebacks unchanged.
    """
    if not lines:
        return lines
    first = lines[0]
    if not (first.startswith("%%graph") and first[7:8] in ("", " ", "\t", "\n", "\r")):
        return lines
    return [repr(f"{MARKER} {first[7:].strip()}".strip()) + "\n", *lines[1:]]


# ``has_side_effects`` keeps IPython's ``check_complete`` treating ``%%graph`` as a cell magic
# (complete at a blank line) instead of checking the rewritten text. IPython reads it off the
# function object, which no type declares.
rewrite_graph_cell.has_side_effects = True  # type: ignore[attr-defined]  # IPython's mark on the function


class GraphCellTransformer(ast.NodeTransformer):
    """AST transformer: wrap a marked cell's body in ``[async] with _graph_cell(ARGS):``,
    and route its last expression through the cell so it is still displayed."""

    def visit_Module(self, node: ast.Module) -> ast.Module:
        args = _marker_args(node.body[0]) if node.body else None
        if args is None:
            return node
        marker, body = node.body[0], node.body[1:]
        module = f"__import__({__name__!r}, fromlist=['_'])"
        tail: list[ast.stmt] = []
        if body and isinstance(body[-1], ast.Expr):
            keep = ast.parse(f"{module}._graph_cell_keep(None)").body[0]
            assert isinstance(keep, ast.Expr) and isinstance(keep.value, ast.Call)
            keep.value.args = [body[-1].value]
            body[-1] = ast.copy_location(keep, body[-1])
            tail = [ast.parse(f"{module}._graph_cell_result()").body[0]]
        wrapper = "async with" if _has_top_level_await(body) else "with"
        block = ast.parse(f"{wrapper} {module}._graph_cell({args!r}):\n    pass").body[0]
        assert isinstance(block, (ast.With, ast.AsyncWith))
        block.body = body or [ast.Pass()]
        node.body = [ast.copy_location(block, marker), *tail]
        return ast.fix_missing_locations(node)


def _shell_session() -> tuple[GraphSession, Any]:
    """The session and magics of the running shell."""
    from IPython import get_ipython

    entry = _SESSIONS.get(id(get_ipython()))
    if entry is None:
        raise RuntimeError("durable_debug is not loaded in this shell: %load_ext durable_debug")
    session, magics, _, _ = entry
    return session, magics


def _graph_cell(args: str) -> GraphCell:
    """Called by a rewritten cell: the recorder context for this shell and these options."""
    session, magics = _shell_session()
    return session.cell(magics.cell_options(args))


def _graph_cell_keep(value: Any) -> None:
    """Called by a rewritten cell with its last expression's value."""
    cell = _shell_session()[0].current
    if cell is not None:
        cell.keep(value)


def _graph_cell_result() -> Any:
    """Called at the end of a rewritten cell: the value to display, once the counts are."""
    session = _shell_session()[0]
    cell, session.current = session.current, None
    return None if cell is None else cell.result()


def _marker_args(statement: ast.stmt) -> str | None:
    """The ``%%graph`` arguments if ``statement`` is the marker, else None."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)):
        return None
    text = statement.value.value
    if not (isinstance(text, str) and text.split(" ", 1)[0] == MARKER):
        return None
    return text[len(MARKER) :].strip()


def _has_top_level_await(body: list[ast.stmt]) -> bool:
    """True if the statements await outside any function (what makes a cell a coroutine)."""
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Await, ast.AsyncFor, ast.AsyncWith)):
            return True
        if isinstance(node, ast.comprehension) and node.is_async:
            return True
        if not isinstance(node, scopes):
            stack.extend(ast.iter_child_nodes(node))
    return False


_Function = TypeVar("_Function", bound=Callable[..., Any])


class _Decorator(Protocol):
    """A decorator that returns the function it is given (IPython's argument decorators)."""

    def __call__(self, function: _Function) -> _Function: ...


def _magics_class() -> Any:
    """The ``Magics`` subclass, defined on first use so importing this module needs no IPython."""
    from IPython.core import magic as ipython_magic
    from IPython.core import magic_arguments as ipython_arguments
    from IPython.core.error import UsageError
    from IPython.core.magic import Magics, magics_class

    # IPython's argument decorators carry no annotations, and it types cell_magic and
    # line_magic as returning a union (they also take a name); these names give them the
    # types they have when used as below (a decorator returning the function it was given).
    cell_magic = cast(_Decorator, ipython_magic.cell_magic)
    line_magic = cast(_Decorator, ipython_magic.line_magic)
    magic_arguments: Callable[[], _Decorator] = ipython_arguments.magic_arguments
    argument: Callable[..., _Decorator] = ipython_arguments.argument
    parse_argstring: Callable[[Any, str], Any] = ipython_arguments.parse_argstring

    @magics_class
    class DurableDebugMagics(Magics):
        """``%%graph``, ``%checkpoints`` and ``%diff``, each thin over GraphSession."""

        def __init__(self, shell: Any, session: GraphSession) -> None:
            super().__init__(shell)
            self.session = session

        @magic_arguments()
        @argument("--thread", default=None, help="thread to show (default: the last touched)")
        @argument("--counts", default=None, help="store the counts DataFrame under this name")
        @argument("--no-widget", action="store_true", help="show the counts only")
        @argument("--graph", default=None, help="name of the compiled graph to show")
        @cell_magic
        def graph(self, line: str, cell: str) -> None:
            """Run the cell with durable_debug's execution recorder on, then show executions
            per node and the thread's widget. Top-level await works as in any cell."""
            # Normally the transformers rewrite the cell and this never runs; it does when
            # called explicitly (run_cell_magic), where running the body as a cell is fine.
            with self.session.cell(self.cell_options(line)):
                shell: Any = self.shell
                result = shell.run_cell(cell, store_history=False)
            result.raise_error()

        def cell_options(self, line: str) -> CellOptions:
            args = parse_argstring(self.graph, line)
            return CellOptions(args.thread, args.counts, not args.no_widget, args.graph)

        @magic_arguments()
        @argument("thread", nargs="?", default=None, help="thread id (default: the last)")
        @argument("--graph", default=None, help="name of the compiled graph")
        @line_magic
        def checkpoints(self, line: str) -> pd.DataFrame:
            """The checkpoints of a thread, every branch, oldest first (history_frame)."""
            args = parse_argstring(self.checkpoints, line)
            with _usage_errors():
                frame = run_sync(self.session.acheckpoints(args.thread, args.graph))
            found = frame_findings_text(frame)
            if found:  # a line per finding, under its checkpoint, above the table
                print(found)
            return frame

        @magic_arguments()
        @argument("a", help="checkpoint id (or unique prefix)")
        @argument("b", help="checkpoint id (or unique prefix)")
        @argument("--thread", default=None, help="thread id (default: the last)")
        @argument("--graph", default=None, help="name of the compiled graph")
        @argument("--paths", action="store_true", help="one row per nested path")
        @line_magic
        def diff(self, line: str) -> pd.DataFrame:
            """What changed from checkpoint A to checkpoint B, per channel (diff_frame)."""
            args = parse_argstring(self.diff, line)
            with _usage_errors():
                return run_sync(
                    self.session.adiff(args.a, args.b, args.thread, args.graph, args.paths)
                )

        @magic_arguments()
        @argument("thread", nargs="?", default=None, help="thread id (default: the last)")
        @argument("--graph", default=None, help="name of the compiled graph")
        @line_magic
        def replay_check(self, line: str) -> ReplayCheck:
            """Run every recorded task of a thread again on the code as it is now, its model
            and tool calls answered from the recording, and say which tasks write something
            else (``durable_debug.inspect.replay_check``)."""
            args = parse_argstring(self.replay_check, line)
            with _usage_errors():
                report = run_sync(self.session.areplay_check(args.thread, args.graph))
            print(replay_text(report))
            return report

    @contextmanager
    def _usage_errors() -> Iterator[None]:
        """A thread or checkpoint named wrongly is a one-line usage error, not a traceback."""
        try:
            yield
        except (LookupError, ValueError) as exc:
            raise UsageError(str(exc)) from exc

    return DurableDebugMagics
