"""``interrupt()``: pause a node until a human answers, and match answers to interrupts by id.

    async def gate(state):
        decision = interrupt({"question": "approve this plan?"})   # pauses the run here
        return {"approved": decision}

    await graph.ainvoke(Command(resume="APPROVED"), config)           # gate re-runs; interrupt
                                                                       # now returns "APPROVED"

A node that interrupts has produced no output, so on resume it runs again from its top; the
interrupts it already passed return their saved answers, and the first unanswered one pauses
again. Interrupt ids come from the task id and the interrupt's position in the node.
"""

from __future__ import annotations

import contextvars
import re
import warnings
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from durable_debug.graph.deprecation import LangGraphDeprecatedSinceV10
from durable_debug.graph.findings import Finding
from durable_debug.graph.types import INVALID_RESUME, GraphInterrupt, Interrupt

if TYPE_CHECKING:
    from durable_debug.graph.findings import RunFindings
    from durable_debug.graph.subgraph import Nesting

__all__ = [
    "SUBGRAPH_ANSWER",
    "Answers",
    "NodeInterrupt",
    "Scratchpad",
    "interrupt",
    "is_resume_map",
    "match_resume",
    "next_interrupt_id",
    "own_answers",
    "subgraph_answer",
    "subgraph_answered",
]


SUBGRAPH_ANSWER = "__subgraph_answer__"
"""Marks an entry of a task's saved resume values that answers an interrupt of a subgraph
the task runs (``{SUBGRAPH_ANSWER: interrupt_id, "value": answer}``), not its own."""


def subgraph_answer(interrupt_id: str, value: Any) -> dict[str, Any]:
    """The saved form of an answer to a subgraph's interrupt ``interrupt_id``."""
    return {SUBGRAPH_ANSWER: interrupt_id, "value": value}


def subgraph_answered(resume: list[Any] | None) -> set[str]:
    """The ids of the subgraph interrupts a task's saved resume values answer."""
    return {
        str(v[SUBGRAPH_ANSWER])
        for v in resume or ()
        if isinstance(v, dict) and SUBGRAPH_ANSWER in v
    }


def own_answers(resume: list[Any] | None) -> list[Any]:
    """A task's saved resume values without those meant for its subgraphs: the answers its
    own ``interrupt()`` calls return, in order."""
    return [v for v in resume or () if not (isinstance(v, dict) and SUBGRAPH_ANSWER in v)]


@dataclass
class Answers:
    """The answers a resumed top-level run hands down to its subgraphs, by interrupt id.

    The subgraph task paused on an interrupt claims its answer when the subgraph resumes; an
    answer nobody claims (the subgraph's state was updated meanwhile, so the paused task is
    gone) goes to the first ``interrupt()`` of a subgraph that has no answer of its own, run
    under the same top-level task as the interrupt it answered (``owners``): subgraphs that
    run side by side, each paused, never take each other's answers, whichever resumes first.
    """

    values: dict[str, Any] = field(default_factory=dict)
    claimed: set[str] = field(default_factory=set)
    owners: dict[str, str | None] = field(default_factory=dict)
    """Interrupt id → the top-level task whose subgraphs may take its answer as a spare one
    (None: any, for an answer whose task the step no longer has)."""

    def hand_down(self, interrupt_id: str, value: Any, owner: str | None) -> None:
        """Hold ``value``, the answer to ``interrupt_id``, for the graphs run inside the
        top-level task ``owner`` (None: for whichever asks first)."""
        self.values[interrupt_id] = value
        self.owners[interrupt_id] = owner

    def claim(self, interrupt_id: str) -> None:
        """Mark the answer to ``interrupt_id`` as taken."""
        self.claimed.add(interrupt_id)

    def take_spare(self, root: str | None) -> tuple[bool, Any]:
        """``(True, answer)`` for the first answer not claimed yet (now claimed) that an
        ``interrupt()`` run under the top-level task ``root`` may take, else
        ``(False, None)``."""
        for key, value in self.values.items():
            owner = self.owners.get(key)
            if key not in self.claimed and (owner is None or owner == root):
                self.claimed.add(key)
                return True, value
        return False, None


@dataclass
class Scratchpad:
    """Per-task state that ``interrupt()`` reads: the task id and its resume values.

    Not a slots class: a field left at its plain default is read from the class, so
    ``runner.run_task`` sets only the fields a task's own values fill."""

    task_id: str
    resume: list[Any] = field(default_factory=list)
    """Resume values for its ``interrupt()`` calls, in order."""
    namespace: str = ""
    """The task's own namespace (``parent_ns|node:task_id``): its interrupts' ids hash it."""
    path: tuple[Any, ...] = ()
    """The task's path: the ids of the ``@task`` calls it makes hash it."""
    counter: int = 0
    can_interrupt: bool = True
    node: str = ""
    once: list[Any] = field(default_factory=list)
    """Results of the ``once()`` effects this task completed before, in call order."""
    once_counter: int = 0
    save_once: Callable[[list[Any]], Coroutine[Any, Any, None]] | None = None
    """Saves the task's ``once`` results durably (None without a checkpointer)."""
    before_effect: Callable[[], Coroutine[Any, Any, None]] | None = None
    """Waits until the checkpoint the task runs on is saved (a ``durability="async"`` run may
    still be saving it), so that an effect never happens before the step it belongs to is
    durable: a crash in between would re-run the step before it, under new task ids, and the
    effect with it (None when nothing can be pending)."""
    nesting: Nesting | None = None
    """What a graph run inside this task inherits (see ``subgraph.py``)."""
    answers: Answers | None = None
    """Answers given to the top-level run, handed down to graphs run inside this task."""
    subgraph_calls: int = 0
    """Graphs this task has started so far (each saves under its own namespace)."""
    spare: bool = False
    """The task belongs to a subgraph: an ``interrupt()`` with no answer of its own takes an
    answer no paused task claimed (LangGraph's resume of a subgraph that was changed)."""
    root: str | None = None
    """The id of the top-level run's task this task runs under (its own id at the top
    level): which spare answers it may take (:meth:`Answers.take_spare`)."""
    calls: int = 0
    """``@task`` calls this task has made so far (the n-th call's id uses n)."""
    managed: dict[str, Any] = field(default_factory=dict)
    """The managed values (``RemainingSteps``…) of the task's step, which its conditional
    edges read too."""
    findings: RunFindings | None = None
    """Where the task reports what it let pass (an ``interrupt()`` with no checkpointer)."""
    inline: bool = False
    """The (sync) task runs on the run's own event loop thread, which waits for it: a
    ``@task`` it calls runs to its end before the call returns."""
    pushed: list[tuple[str, Any]] = field(default_factory=list)
    """State writes ``push_message`` made in this attempt of the task, in order: they come
    before the writes of the node's return value."""


_SCRATCHPAD: contextvars.ContextVar[Scratchpad | None] = contextvars.ContextVar(
    "durable_debug_scratchpad", default=None
)


def current_scratchpad() -> Scratchpad | None:
    """The scratchpad of the task running in this context, if any."""
    return _SCRATCHPAD.get()


def set_scratchpad(scratchpad: Scratchpad | None) -> contextvars.Token[Scratchpad | None]:
    """Make ``scratchpad`` current; returns the token to reset it."""
    return _SCRATCHPAD.set(scratchpad)


def reset_scratchpad(token: contextvars.Token[Scratchpad | None]) -> None:
    """Undo :func:`set_scratchpad`."""
    _SCRATCHPAD.reset(token)


def interrupt(value: Any, *, response_schema: Any = None) -> Any:
    """Pause the run and hand ``value`` to the caller; return the resume value once answered.

    Must be called inside a node; in a graph compiled without a checkpointer the run ends with
    ``__interrupt__`` as LangGraph's does, which nothing can resume (an ``interrupt-no-saver``
    finding; ``strict=True`` raises ``RuntimeError`` instead). Each call in a node
    has its own id; answered calls return their answer immediately when the node re-runs.

    ``response_schema`` describes the answer expected, for clients to render a form: a JSON
    Schema dict (shown as given, answers not checked), or a pydantic model, TypedDict or
    dataclass, shown as its JSON Schema; the answer is then validated into it (what this
    returns), and one that does not match raises ``pydantic.ValidationError`` from the
    node, for which :func:`is_invalid_resume` is true (as LangGraph).
    """
    from durable_debug.graph.ids import interrupt_id

    scratchpad = _SCRATCHPAD.get()
    if scratchpad is None:
        raise RuntimeError(
            "interrupt() was called outside a running node; call it from inside a node "
            "function of a compiled graph"
        )
    if not scratchpad.can_interrupt:
        message = (
            f"Node {scratchpad.node!r} called interrupt() but the graph has no checkpointer, "
            "so the run cannot be resumed; compile with checkpointer=MemorySaver() (or "
            "another saver)"
        )
        if scratchpad.findings is None:  # a task the debugger re-runs: nothing to end
            raise RuntimeError(message)
        # LangGraph ends the run with ``__interrupt__``, which nothing can resume
        scratchpad.findings.report(
            Finding("interrupt-no-saver", message, scratchpad.node),
            RuntimeError(message),
        )
    adapter = _response_adapter(response_schema)
    index = scratchpad.counter
    scratchpad.counter += 1
    if index < len(scratchpad.resume):
        return _validated(adapter, scratchpad.resume[index])
    if scratchpad.spare and scratchpad.answers is not None:
        found, answer = scratchpad.answers.take_spare(scratchpad.root)
        if found:
            scratchpad.resume.append(answer)  # saved with the task's outcome
            return _validated(adapter, answer)
    shown = adapter.json_schema() if adapter is not None else response_schema
    raise GraphInterrupt(
        [
            Interrupt(
                value=value,
                id=interrupt_id(scratchpad.namespace, len(scratchpad.resume)),
                response_schema=shown,
            )
        ]
    )


def _response_adapter(response_schema: Any) -> Any:
    """A pydantic ``TypeAdapter`` of a ``response_schema`` class (None for none or a JSON
    Schema dict)."""
    if response_schema is None or isinstance(response_schema, dict):
        return None
    try:
        from pydantic import TypeAdapter
    except ImportError:  # pragma: no cover - pydantic comes with LangChain
        raise ImportError(
            f"interrupt(response_schema={response_schema!r}) needs pydantic to describe and "
            "validate the answer: pip install pydantic (or pass a JSON Schema dict)"
        ) from None
    return TypeAdapter(response_schema)


def _validated(adapter: Any, answer: Any) -> Any:
    """``answer`` validated by ``adapter`` (as is without one); a mismatch raises pydantic's
    ``ValidationError`` marked so that :func:`is_invalid_resume` recognizes it."""
    if adapter is None:
        return answer
    from pydantic import ValidationError

    try:
        return adapter.validate_python(answer)
    except ValidationError as exc:
        setattr(exc, INVALID_RESUME, True)
        raise


def next_interrupt_id() -> str:
    """The id the next interrupt of the running node gets (for ``NodeInterrupt``), or a
    fixed placeholder outside a node."""
    from durable_debug.graph.ids import interrupt_id

    scratchpad = _SCRATCHPAD.get()
    if scratchpad is None:
        return "placeholder-id"
    index = scratchpad.counter
    scratchpad.counter += 1
    return interrupt_id(scratchpad.namespace, index)


_INTERRUPT_ID = re.compile(r"^[0-9a-f]{32}$")


def is_resume_map(resume: Any) -> bool:
    """True when ``resume`` is ``{interrupt_id: value}`` rather than a single value.

    A dict counts as a map when every key looks like an interrupt id (32 hex digits), so a
    plain dict answer such as ``{"approved": True}`` is still a single value.
    """
    return (
        isinstance(resume, Mapping)
        and bool(resume)
        and all(isinstance(k, str) and _INTERRUPT_ID.match(k) for k in resume)
    )


def match_resume(
    resume: Any,
    pending: Mapping[str, Sequence[Interrupt[Any]]],
    *,
    thread_id: str | None,
    report: Callable[[Finding, BaseException], None] | None = None,
) -> list[tuple[str, str, Any]]:
    """Assign resume values to the tasks whose interrupts they answer.

    ``pending`` maps task id → the interrupts that task is paused on (several when a subgraph
    it runs paused on parallel interrupts). Returns ``(task id, interrupt id, value)`` for
    each answer.
    As in LangGraph, a resume with nothing pending and the ids of a resume map that match no
    pending interrupt are ignored: each is reported to ``report`` as a finding with the
    ValueError it raised before (``report`` raises it under ``strict``; without ``report``
    it is raised). A single value while several interrupts are pending raises RuntimeError,
    as LangGraph does.
    """
    where = f"Thread {thread_id!r}" if thread_id else "This run"

    def found(finding: Finding, error: BaseException) -> None:
        if report is None:
            raise error
        report(finding, error)

    if not pending:
        found(
            Finding(
                "resume-nothing-pending",
                f"{where} had no pending interrupt, so Command(resume=...) answered nothing: "
                "the value was ignored, as LangGraph ignores it.",
            ),
            ValueError(
                f"{where} has no pending interrupt, so Command(resume=...) has nothing to "
                "answer. Use graph.get_state(config).interrupts to see what is pending; to "
                "continue a paused or failed run without an answer, invoke with None. "
                "(LangGraph ignores such a resume value silently.)"
            ),
        )
        return []
    waiting = [(tid, i) for tid, intrs in pending.items() for i in intrs]
    listing = ", ".join(f"{i.id} ({i.value!r:.60})" for _, i in waiting)
    if is_resume_map(resume):
        by_id = {intr.id: tid for tid, intr in waiting}
        unknown = [k for k in resume if k not in by_id]
        error = ValueError(
            f"{where}: the resume map names interrupt id(s) {', '.join(unknown)} that are "
            f"not pending; pending interrupts: {listing}. Nothing was resumed. (LangGraph "
            "ignores unknown ids silently.)"
        )
        for key in unknown:
            found(
                Finding(
                    "resume-unknown-id",
                    f"{where}: the resume map named interrupt id {key} that is not pending "
                    f"(pending: {listing}); its value was ignored, as LangGraph ignores it.",
                    key=key,
                ),
                error,
            )
        return [(by_id[k], k, v) for k, v in resume.items() if k in by_id]
    if len(waiting) > 1:
        raise RuntimeError(
            "When there are multiple pending interrupts, you must specify the interrupt id "
            f"when resuming. {where} has {len(waiting)} pending interrupts, so a single "
            "resume value is ambiguous; answer them by id with "
            f"Command(resume={{interrupt_id: value, ...}}). Pending: {listing}"
        )
    ((tid, asked),) = waiting
    return [(tid, asked.id, resume)]


class NodeInterrupt(GraphInterrupt):
    """Raised inside a node to pause the run with ``value`` (LangGraph's older form of
    ``interrupt()``, deprecated there but still in use).

    The run stops as on ``interrupt()``: the task shows the interrupt, the caller gets it under
    ``"__interrupt__"``. Unlike ``interrupt()``, nothing is answered: resuming (with None)
    runs the node again from its top, typically after ``update_state`` changed what made it
    stop.
    """

    def __init__(self, value: Any, id: str | None = None) -> None:
        warnings.warn(
            "NodeInterrupt is deprecated. Please use `langgraph.types.interrupt` instead.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        if id is None:
            id = next_interrupt_id()
        super().__init__([Interrupt(value=value, id=id)])
