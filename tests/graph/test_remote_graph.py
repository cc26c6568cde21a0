"""RemoteGraph against a LangGraph API server, through the real ``langgraph_sdk`` clients.

The server is :class:`FakeApi`: the endpoints RemoteGraph calls (run streams as server-sent
events, thread state, history, state updates, the assistant's drawing), answered by our engine
running the deployed graph, behind httpx's in-process transport. The same clients serve our
RemoteGraph and LangGraph's, so the differential tests compare the two clients on identical
server answers: what each yields, returns and raises, alone and as a node of a local graph (of
either library).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import dataclasses
import json
import operator
import re
import subprocess
import sys
from collections.abc import Callable
from typing import Annotated, Any

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient, SyncLangGraphClient
from typing_extensions import TypedDict

from durable_debug import END, START, Command, MemorySaver, StateGraph, interrupt
from durable_debug.errors import GraphInterrupt
from durable_debug.pregel.protocol import StreamProtocol
from durable_debug.pregel.remote import LANGGRAPH_STREAM_KEY, RemoteException, RemoteGraph
from durable_debug.types import Interrupt, StateSnapshot


class State(TypedDict, total=False):
    topic: str
    log: Annotated[list[str], operator.add]
    answer: str


def draft(state: State) -> dict[str, Any]:
    return {"log": [f"draft {state['topic']}"]}


def review(state: State) -> dict[str, Any]:
    return {"log": ["review"]}


def ask(state: State) -> dict[str, Any]:
    return {"answer": interrupt({"question": f"publish {state['topic']}?"})}


def fail(state: State) -> dict[str, Any]:
    raise ValueError(f"no topic like {state['topic']}")


def deployed(*nodes: tuple[str, Callable[..., Any]]) -> Any:
    """The graph the server runs: the nodes in a chain, with an in-memory saver."""
    builder = StateGraph(State)
    previous = START
    for name, fn in nodes:
        builder.add_node(name, fn).add_edge(previous, name)
        previous = name
    return builder.add_edge(previous, END).compile(checkpointer=MemorySaver())


def _jsonable(value: Any) -> Any:
    if isinstance(value, Interrupt):
        return {"value": value.value, "id": value.id}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"not JSON: {value!r}")


def _dumps(value: Any) -> str:
    return json.dumps(value, default=_jsonable)


class FakeApi:
    """A LangGraph API server for one assistant, ``graph``, answering on httpx's in-process
    transport. Each run is made by our engine on a thread of its own (no context of the
    caller's leaks into it: the caller may be a node of a running local graph)."""

    def __init__(self, graph: Any, assistant: str = "agent") -> None:
        self.graph = graph
        self.assistant = assistant
        self.requests: list[tuple[str, str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.runs = 0

    def clients(self) -> tuple[LangGraphClient, SyncLangGraphClient]:
        transport = httpx.MockTransport(self.handle)
        base = "http://langgraph.test"
        return (
            LangGraphClient(httpx.AsyncClient(base_url=base, transport=transport)),
            SyncLangGraphClient(httpx.Client(base_url=base, transport=transport)),
        )

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        path = request.url.path
        self.requests.append((request.method, path, body))
        self.headers.append(dict(request.headers))
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(self._answer, request.method, path, body).result()

    def _answer(self, method: str, path: str, body: Any) -> httpx.Response:
        if m := re.fullmatch(r"/threads/([^/]+)/runs/stream", path):
            return self._run(m.group(1), body)
        if m := re.fullmatch(r"/threads/([^/]+)/state", path):
            config = {"configurable": {"thread_id": m.group(1)}}
            if method == "GET":
                return self._json(self._state(self.graph.get_state(config)))
            if body.get("checkpoint"):
                config = {"configurable": body["checkpoint"]}
            saved = self.graph.update_state(config, body["values"], body.get("as_node"))
            return self._json({"checkpoint": saved["configurable"]})
        if m := re.fullmatch(r"/threads/([^/]+)/state/checkpoint", path):
            snapshot = self.graph.get_state({"configurable": body["checkpoint"]})
            return self._json(self._state(snapshot))
        if m := re.fullmatch(r"/threads/([^/]+)/history", path):
            config = {"configurable": {"thread_id": m.group(1), **(body.get("checkpoint") or {})}}
            before = {"configurable": body["before"]} if body.get("before") else None
            states = self.graph.get_state_history(
                config, filter=body.get("metadata"), before=before, limit=body["limit"]
            )
            return self._json([self._state(s) for s in states])
        if re.fullmatch(rf"/assistants/{self.assistant}/graph", path):
            drawing = self.graph.get_graph()
            nodes = [
                {"id": n.id, "type": "runnable", "data": {"name": n.name}}
                for n in drawing.nodes.values()
            ]
            edges = [{"source": e.source, "target": e.target} for e in drawing.edges]
            return self._json({"nodes": nodes, "edges": edges})
        return httpx.Response(404, json={"detail": f"no route {method} {path}"})

    @staticmethod
    def _json(value: Any) -> httpx.Response:
        return httpx.Response(
            200, content=_dumps(value), headers={"content-type": "application/json"}
        )

    @staticmethod
    def _checkpoint(config: Any) -> dict[str, Any] | None:
        if config is None:
            return None
        c = config["configurable"]
        return {
            "thread_id": c["thread_id"],
            "checkpoint_ns": c.get("checkpoint_ns", ""),
            "checkpoint_id": c["checkpoint_id"],
            "checkpoint_map": {},
        }

    def _state(self, snapshot: StateSnapshot) -> dict[str, Any]:
        tasks = [
            {
                "id": t.id,
                "name": t.name,
                "error": t.error,
                "interrupts": [_jsonable(i) for i in t.interrupts],
                "checkpoint": None,
                "state": None,
                "result": t.result,
            }
            for t in snapshot.tasks
        ]
        return {
            "values": snapshot.values,
            "next": list(snapshot.next),
            "checkpoint": self._checkpoint(snapshot.config),
            "metadata": snapshot.metadata,
            "created_at": snapshot.created_at,
            "parent_checkpoint": self._checkpoint(snapshot.parent_config),
            "tasks": tasks,
            "interrupts": [_jsonable(i) for i in snapshot.interrupts],
        }

    def _run(self, thread_id: str, body: dict[str, Any]) -> httpx.Response:
        self.runs += 1
        modes = ["messages" if m == "messages-tuple" else m for m in body["stream_mode"]]
        config = dict(body.get("config") or {})
        config["configurable"] = {**config.get("configurable", {}), "thread_id": thread_id}
        command = body.get("command")
        run_input = Command(**command) if command else body.get("input")
        events = [("metadata", {"run_id": f"run-{self.runs}"})]
        subgraphs = bool(body.get("stream_subgraphs"))
        try:
            for item in _collect(
                self.graph.astream(
                    run_input,
                    config,
                    stream_mode=modes,
                    subgraphs=subgraphs,
                    interrupt_before=body.get("interrupt_before"),
                    interrupt_after=body.get("interrupt_after"),
                )
            ):
                ns, mode, chunk = item if subgraphs else ((), *item)
                events.append(("|".join((mode, *ns)), chunk))
        except Exception as exc:
            events.append(("error", {"error": type(exc).__name__, "message": str(exc)}))
        else:
            events.append(("end", {"run_id": f"run-{self.runs}", "status": "success"}))
        text = "".join(f"event: {event}\ndata: {_dumps(data)}\n\n" for event, data in events)
        return httpx.Response(200, content=text, headers={"content-type": "text/event-stream"})


def _collect(chunks: Any) -> list[Any]:
    """The items of an async iterator, on an event loop of this thread's own."""

    async def collect() -> list[Any]:
        return [chunk async for chunk in chunks]

    return asyncio.run(collect())


def remotes(api: FakeApi, **kwargs: Any) -> tuple[RemoteGraph, Any]:
    """Our RemoteGraph and LangGraph's, on the same clients of ``api``."""
    from langgraph.pregel.remote import RemoteGraph as LangGraphRemote

    client, sync_client = api.clients()
    ours = RemoteGraph(api.assistant, client=client, sync_client=sync_client, **kwargs)
    theirs = LangGraphRemote(api.assistant, client=client, sync_client=sync_client, **kwargs)
    return ours, theirs


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}")
"""A task id (a UUID) or an interrupt id (32 hex digits)."""


def normalized(value: Any) -> Any:
    """``value`` with ids of tasks (in namespaces) and interrupts replaced by labels, and
    the two libraries' interrupt and command classes compared by their fields."""
    labels: dict[str, str] = {}

    def label(text: str) -> str:
        return labels.setdefault(text, f"id{len(labels)}")

    def walk(v: Any) -> Any:
        name = type(v).__name__
        if name == "Interrupt":
            return ("Interrupt", walk(v.value), label(v.id))
        if isinstance(v, str):
            return re.sub(_ID, lambda m: label(m.group(0)), v)
        if isinstance(v, dict):
            return {walk(k): walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, tuple):
            return tuple(walk(x) for x in v)
        return v

    return walk(value)


# -- a remote graph alone --------------------------------------------------------------------


@pytest.mark.parity
@pytest.mark.parametrize(
    ("stream_mode", "subgraphs", "version"),
    [
        (None, False, "v1"),
        ("values", False, "v1"),
        (["values", "updates"], False, "v1"),
        ("updates", True, "v1"),
        (["updates", "values"], True, "v1"),
        ("values", False, "v2"),
    ],
)
def test_stream_yields_what_langgraphs_remote_graph_yields(
    stream_mode: Any, subgraphs: bool, version: str
) -> None:
    api = FakeApi(deployed(("draft", draft), ("review", review)))
    ours, theirs = remotes(api)
    kwargs = {"stream_mode": stream_mode, "subgraphs": subgraphs, "version": version}
    got = list(ours.stream({"topic": "tea"}, thread("a"), **kwargs))
    expected = list(theirs.stream({"topic": "tea"}, thread("b"), **kwargs))
    assert normalized(got) == normalized(expected)
    assert got  # the server streamed something


@pytest.mark.parity
async def test_invoke_returns_the_final_state_as_langgraphs_remote_graph_does() -> None:
    api = FakeApi(deployed(("draft", draft), ("review", review)))
    ours, theirs = remotes(api)
    assert ours.invoke({"topic": "tea"}, thread("a")) == {
        "topic": "tea",
        "log": ["draft tea", "review"],
    }
    assert await ours.ainvoke({"topic": "tea"}, thread("c")) == theirs.invoke(
        {"topic": "tea"}, thread("d")
    )
    out = await ours.ainvoke({"topic": "rye"}, thread("e"), version="v2")
    assert (out.value, out.interrupts) == ({"topic": "rye", "log": ["draft rye", "review"]}, ())


@pytest.mark.parity
async def test_an_interrupt_and_its_resume_round_trip_as_with_langgraphs_remote_graph() -> None:
    api = FakeApi(deployed(("draft", draft), ("ask", ask)))
    ours, theirs = remotes(api)
    seen = []
    for remote, name in ((ours, "a"), (theirs, "b")):
        first = [c async for c in remote.astream({"topic": "tea"}, thread(name))]
        second = remote.invoke(
            Command(resume="yes") if remote is ours else _lg_resume("yes"), thread(name)
        )
        state = remote.get_state(thread(name))
        seen.append(normalized((first, second, state.values, state.next)))
    assert seen[0] == seen[1]
    assert seen[0][1] == {"topic": "tea", "log": ["draft tea"], "answer": "yes"}
    # Not called as a subgraph (no caller namespace): the interrupt is a chunk, not raised.
    assert seen[0][0][-1] == {
        "__interrupt__": [{"value": {"question": "publish tea?"}, "id": "id0"}]
    }


def _lg_resume(value: Any) -> Any:
    from langgraph.types import Command as LangGraphCommand

    return LangGraphCommand(resume=value)


@pytest.mark.parity
async def test_state_history_and_updates_read_the_servers_thread() -> None:
    api = FakeApi(deployed(("draft", draft), ("review", review)))
    ours, theirs = remotes(api)
    ours.invoke({"topic": "tea"}, thread("a"))
    theirs.invoke({"topic": "tea"}, thread("b"))
    for name, remote in (("a", ours), ("b", theirs)):
        assert remote.get_state(thread(name)).next == ()
    snapshots = [ours.get_state(thread("a")), await ours.aget_state(thread("a"))]
    for snapshot in snapshots:
        assert snapshot.values == {"topic": "tea", "log": ["draft tea", "review"]}
        assert snapshot.config["configurable"]["thread_id"] == "a"
        assert snapshot.parent_config is not None
    history = list(ours.get_state_history(thread("a")))
    assert [s.metadata["step"] for s in history] == [2, 1, 0, -1]
    assert normalized([tuple(s) for s in history]) == normalized(
        [tuple(s) for s in theirs.get_state_history(thread("a"))]
    )
    older = [s async for s in ours.aget_state_history(thread("a"), before=history[1].config)]
    assert [s.metadata["step"] for s in older] == [0, -1]
    assert len(list(ours.get_state_history(thread("a"), limit=1))) == 1

    updated = ours.update_state(thread("a"), {"log": ["edited"]}, as_node="review")
    assert ours.get_state(updated).values["log"] == ["draft tea", "review", "edited"]
    again = await ours.aupdate_state(thread("a"), {"topic": "rye"})
    assert set(again["configurable"]) == {
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "checkpoint_map",
    }
    assert (await ours.aget_state(thread("a"))).values["topic"] == "rye"
    with pytest.raises(NotImplementedError):
        ours.bulk_update_state(thread("a"), [])


@pytest.mark.parity
async def test_get_graph_draws_the_servers_drawing() -> None:
    api = FakeApi(deployed(("draft", draft), ("review", review)))
    ours, theirs = remotes(api)
    drawn = ours.get_graph()
    assert list(drawn.nodes) == ["__start__", "draft", "review", "__end__"]
    assert [(e.source, e.target) for e in drawn.edges] == [
        ("__start__", "draft"),
        ("draft", "review"),
        ("review", "__end__"),
    ]
    assert drawn.nodes == theirs.get_graph().nodes
    assert (await ours.aget_graph(xray=True)).edges == drawn.edges
    assert api.requests[-1][1] == "/assistants/agent/graph"


@pytest.mark.parity
def test_a_failing_remote_run_raises_remote_exception_as_langgraphs_does() -> None:
    from langgraph.pregel.remote import RemoteException as LangGraphRemoteException

    api = FakeApi(deployed(("fail", fail)))
    ours, theirs = remotes(api)
    with pytest.raises(RemoteException) as caught:
        ours.invoke({"topic": "tea"}, thread("a"))
    with pytest.raises(LangGraphRemoteException) as reference:
        theirs.invoke({"topic": "tea"}, thread("b"))
    assert caught.value.args == reference.value.args
    assert caught.value.args[0] == {"error": "ValueError", "message": "no topic like tea"}


def test_the_config_sent_keeps_what_the_server_can_take() -> None:
    api = FakeApi(deployed(("draft", draft)))
    client, sync_client = api.clients()
    remote = RemoteGraph(
        "agent",
        client=client,
        sync_client=sync_client,
        config={"tags": ["base", 7], "configurable": {"model": "small"}},
    ).with_config(
        {"metadata": {"who": "me", "fn": print, "deep": {"a": 1, "f": print, 3: "x"}}},
        recursion_limit=9,
    )
    remote.invoke(
        {"topic": "tea"},
        {"configurable": {"thread_id": "a", "checkpoint_id": "c1", "user": ("u", 1)}},
    )
    method, path, body = api.requests[-1]
    assert (method, path) == ("POST", "/threads/a/runs/stream")
    assert body["config"] == {
        "recursion_limit": 9,
        "tags": ["base"],
        "metadata": {"who": "me", "deep": {"a": 1}},
        "configurable": {"model": "small", "user": ["u", 1]},
    }
    with pytest.raises(ValueError, match="unknown version 'v3'"):
        list(remote.stream({}, thread("a"), version="v3"))
    assert body["stream_mode"] == ["values", "updates"]
    assert body["if_not_exists"] == "create"
    assert remote.get_name() == "agent"
    assert RemoteGraph("agent", name="writer").get_name() == "writer"


def test_a_command_is_sent_as_the_runs_command() -> None:
    api = FakeApi(deployed(("ask", ask)))
    client, sync_client = api.clients()
    remote = RemoteGraph("agent", client=client, sync_client=sync_client)
    remote.invoke({"topic": "tea"}, thread("a"))
    remote.invoke(Command(resume="no", update={"topic": "rye"}), thread("a"))
    body = api.requests[-1][2]
    assert body["command"] == {"update": {"topic": "rye"}, "resume": "no", "goto": []}
    assert "input" not in body
    values = remote.get_state(thread("a")).values
    assert (values["topic"], values["answer"]) == ("rye", "no")


def test_clients_are_required_for_what_is_called() -> None:
    remote = RemoteGraph("agent")
    with pytest.raises(ValueError, match="Sync client is not initialized"):
        remote.invoke({}, thread("a"))
    with pytest.raises(ValueError, match="needs a thread"):
        RemoteGraph("agent", sync_client=object()).get_state({})


async def test_the_async_client_is_required_for_async_calls() -> None:
    with pytest.raises(ValueError, match="Async client is not initialized"):
        await RemoteGraph("agent").ainvoke({}, thread("a"))


def test_url_makes_the_sdk_clients() -> None:
    remote = RemoteGraph("agent", url="http://127.0.0.1:9", api_key=None)
    assert isinstance(remote.client, LangGraphClient)
    assert isinstance(remote.sync_client, SyncLangGraphClient)
    copy = remote.with_config(configurable={"k": "v"})
    assert copy.client is remote.client and copy.config == {"configurable": {"k": "v"}}


def test_the_package_imports_without_langgraph_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    code = (
        "import sys; sys.modules['langgraph_sdk'] = None\n"
        "from durable_debug.pregel.remote import RemoteGraph\n"
        "RemoteGraph('agent')\n"
        "try:\n"
        "    RemoteGraph('agent', url='http://127.0.0.1:9')\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert "needs the langgraph-sdk package: pip install langgraph-sdk" in done.stdout


# -- a remote graph as a node of a local graph -----------------------------------------------


def local_graph(api: Any, remote: Any, *, langgraph: bool = False) -> Any:
    """A local graph (ours, or LangGraph's) whose node ``agent`` is the remote graph."""
    if langgraph:
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.graph import END as LG_END
        from langgraph.graph import START as LG_START
        from langgraph.graph import StateGraph as LangGraphStateGraph

        builder = LangGraphStateGraph(State)
        return (
            builder.add_node("agent", remote)
            .add_edge(LG_START, "agent")
            .add_edge("agent", LG_END)
            .compile(checkpointer=InMemorySaver())
        )
    return (
        StateGraph(State)
        .add_node("agent", remote)
        .add_edge(START, "agent")
        .add_edge("agent", END)
        .compile(checkpointer=MemorySaver())
    )


@pytest.mark.parity
@pytest.mark.parametrize("stream_mode", ["updates", ["values", "updates"]])
async def test_as_a_node_its_chunks_reach_the_local_stream_as_with_langgraph(
    stream_mode: Any,
) -> None:
    api = FakeApi(deployed(("draft", draft), ("review", review)))
    ours, theirs = remotes(api)
    runs = []
    for remote, langgraph in ((ours, False), (theirs, True)):
        graph = local_graph(api, remote, langgraph=langgraph)
        chunks = [
            c
            async for c in graph.astream(
                {"topic": "tea"},
                thread(f"local-{langgraph}"),
                stream_mode=stream_mode,
                subgraphs=True,
            )
        ]
        runs.append(normalized(chunks))
    assert runs[0] == runs[1]
    namespaces = {chunk[0] for chunk in runs[0]}
    assert namespaces == {(), ("agent:id0",)}  # the remote's chunks under the node's task
    # The remote run used the local thread (created on the server), with no local addresses.
    assert api.requests[-1][1] == "/threads/local-True/runs/stream"
    assert set(api.requests[-1][2]["config"]["configurable"]) <= {"thread_id"}


@pytest.mark.parity
def test_called_by_a_langgraph_node_its_chunks_reach_langgraphs_stream() -> None:
    """A node of a LangGraph graph calling the remote graph with its config: the chunks go
    to the stream LangGraph hands the node (its private config key), as LangGraph's own
    RemoteGraph's do."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.config import get_config
    from langgraph.graph import START as LG_START
    from langgraph.graph import StateGraph as LangGraphStateGraph

    api = FakeApi(deployed(("draft", draft), ("review", review)))
    runs = []
    for remote in remotes(api):

        def agent(state: State, remote: Any = remote) -> Any:
            return remote.invoke(state, get_config())

        graph = (
            LangGraphStateGraph(State)
            .add_node("agent", agent)
            .add_edge(LG_START, "agent")
            .compile(checkpointer=InMemorySaver())
        )
        config = thread(f"lg-{type(remote).__module__}")
        runs.append(normalized(list(graph.stream({"topic": "tea"}, config, subgraphs=True))))
    assert runs[0] == runs[1]
    assert {chunk[0] for chunk in runs[0]} == {(), ("agent:id0",)}


def test_a_sync_local_run_without_subgraphs_streams_only_its_own_chunks() -> None:
    api = FakeApi(deployed(("draft", draft), ("review", review)))
    ours, _ = remotes(api)
    graph = local_graph(api, ours)
    assert list(graph.stream({"topic": "tea"}, thread("s"))) == [
        {"agent": {"topic": "tea", "log": ["draft tea", "review"]}}
    ]
    assert api.requests[-1][2]["stream_subgraphs"] is False  # not asked of the server
    assert graph.invoke({"topic": "rye"}, thread("t"))["log"] == ["draft rye", "review"]


@pytest.mark.parity
async def test_an_interrupt_of_the_remote_run_pauses_the_local_task_as_with_langgraph() -> None:
    api = FakeApi(deployed(("draft", draft), ("ask", ask)))
    ours, theirs = remotes(api)
    seen = []
    for remote, langgraph in ((ours, False), (theirs, True)):
        graph = local_graph(api, remote, langgraph=langgraph)
        config = thread(f"pause-{langgraph}")
        result = await graph.ainvoke({"topic": "tea"}, config)
        state = await graph.aget_state(config)
        # Resuming re-runs the node, which starts a new remote run on the paused thread:
        # the server pauses again on the same question (no answer reaches it).
        resume = _lg_resume("yes") if langgraph else Command(resume="yes")
        again = await graph.ainvoke(resume, config)
        seen.append(normalized((result, state.next, state.interrupts, again)))
    assert seen[0] == seen[1]
    assert seen[0][1] == ("agent",)
    assert seen[0][2] == (("Interrupt", {"question": "publish tea?"}, "id0"),)
    assert [i[1] for i in seen[0][3]["__interrupt__"]] == [{"question": "publish tea?"}]


def test_a_parent_command_event_becomes_the_tasks_command() -> None:
    remote = RemoteGraph(
        "agent",
        sync_client=_Scripted(
            [("command", {"graph": "__parent__", "goto": "b", "update": {"x": 1}})]
        ),
    )
    from durable_debug.errors import ParentCommand

    with pytest.raises(ParentCommand) as caught:
        remote.invoke({}, thread("a"))
    assert caught.value.command == Command(graph=Command.PARENT, goto="b", update={"x": 1})


def test_interrupts_raise_only_for_a_caller_namespace_and_forward_to_its_stream() -> None:
    events = [
        ("updates|inner:1", {"n": {"y": 1}}),
        ("messages|inner:1", [{"content": "hi"}, {"langgraph_node": "n"}]),
        ("updates", {"__interrupt__": [{"value": "why?", "id": "i1"}]}),
    ]
    forwarded: list[Any] = []
    config = {
        "configurable": {
            "thread_id": "a",
            "checkpoint_ns": "outer:9",
            LANGGRAPH_STREAM_KEY: StreamProtocol(forwarded.append, {"updates", "messages"}),
        }
    }
    remote = RemoteGraph("agent", sync_client=_Scripted(events))
    with pytest.raises(GraphInterrupt) as caught:
        list(remote.stream({}, config, stream_mode="messages"))
    assert caught.value.args[0] == [Interrupt("why?", "i1")]
    assert [(ns, mode) for ns, mode, _ in forwarded] == [
        (("outer:9", "inner:1"), "updates"),
        (("outer:9", "inner:1"), "messages"),
        (("outer:9",), "updates"),
    ]
    sent = remote.sync_client.runs.calls[-1]
    assert sent["stream_subgraphs"] is True
    assert sorted(sent["stream_mode"]) == ["messages-tuple", "updates"]


class _Scripted:
    """A sync SDK client whose ``runs.stream`` answers the given ``(event, data)`` pairs
    (fresh copies each call: a client may change the data it is handed)."""

    def __init__(self, events: list[tuple[str, Any]]) -> None:
        from langgraph_sdk.schema import StreamPart

        class Runs:
            def __init__(self) -> None:
                self.calls: list[dict[str, Any]] = []

            def stream(self, **kwargs: Any) -> Any:
                self.calls.append(kwargs)
                return iter([StreamPart(e, copy.deepcopy(d)) for e, d in events])

        self.runs = Runs()


# -- v3 event streams ------------------------------------------------------------------------


def test_stream_events_v3_starts_the_run_on_the_sdks_thread_stream() -> None:
    calls: list[Any] = []

    class Thread:
        thread_id = "t1"

        def __init__(self) -> None:
            self.values = ["snapshot"]

            class Run:
                def start(self, **kwargs: Any) -> dict[str, str]:
                    calls.append(("start", kwargs))
                    return {"run_id": "r1"}

            self.run = Run()

        def __enter__(self) -> Any:
            calls.append("enter")
            return self

        def __exit__(self, *exc: Any) -> None:
            calls.append("exit")

    class Threads:
        def stream(self, **kwargs: Any) -> Thread:
            calls.append(("threads.stream", kwargs))
            return Thread()

    class Client:
        threads = Threads()

    remote = RemoteGraph("agent", sync_client=Client())
    with remote.stream_events(
        Command(resume="go"),
        {"configurable": {"thread_id": "t1", "checkpoint_ns": "x", "user": "u"}},
        version="v3",
        metadata={"m": 1},
    ) as run:
        assert run.values == ["snapshot"]
        assert list(run.extensions) == [
            "values", "messages", "tool_calls", "subgraphs",
            "updates", "checkpoints", "tasks", "custom",
        ]  # fmt: skip
    assert calls == [
        ("threads.stream", {"thread_id": "t1", "assistant_id": "agent", "headers": None}),
        "enter",
        ("start", {"input": "go", "config": {"configurable": {"user": "u"}}, "metadata": {"m": 1}}),
        "exit",
    ]
    with pytest.raises(NotImplementedError, match="goto"):
        remote.stream_events(Command(goto="b"), version="v3")
    with pytest.raises(NotImplementedError, match="context"):
        remote.stream_events({}, version="v3", context={})
    with pytest.raises(NotImplementedError, match="stream_events"):
        remote.stream_events({}, version="v2")


class _SdkThread:
    """The SDK's thread stream as a v3 run stream sees it: the run, the projections, the
    raw events, subscriptions per channel; sync or async by ``aio``."""

    def __init__(self, *, aio: bool = False, start_error: Exception | None = None) -> None:
        self.aio = aio
        self.calls: list[Any] = []
        self.thread_id = "t1"
        self.values, self.messages = ["v"], ["m"]
        self.tool_calls, self.subgraphs = ["t"], ["s"]
        self.extensions = {"mine": ["x"]}
        self.interrupted, self.interrupts = True, ({"value": "why?"},)
        self.wire = [
            {"method": "updates", "params": {"data": {"n": 1}}},
            {"method": "updates", "params": {}},
            {"method": "tasks", "params": {"data": {"t": 1}}},
        ]
        self.events = _aiter(self.wire) if aio else self.wire
        outer = self

        class Run:
            def start(self, **kwargs: Any) -> Any:
                outer.calls.append(("start", kwargs))
                if start_error is not None:
                    raise start_error
                return _value({"run_id": "r1"}, aio)

        self.run = Run()

    @property
    def output(self) -> Any:
        return _value({"done": True}, self.aio)

    def subscribe(self, channels: list[str]) -> Any:
        return _aiter(self.wire) if self.aio else iter(self.wire)

    def interleave_projections(self, names: list[str]) -> Any:
        return iter([(name, "item") for name in names])

    def __enter__(self) -> Any:
        self.calls.append("enter")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.calls.append(("exit", exc[0]))

    async def __aenter__(self) -> Any:
        return self.__enter__()

    async def __aexit__(self, *exc: Any) -> None:
        self.__exit__(*exc)

    def close(self) -> Any:
        self.calls.append("close")
        return _value(None, self.aio)


def _value(value: Any, aio: bool) -> Any:
    if not aio:
        return value

    async def later() -> Any:
        return value

    return later()


async def _aiter(items: list[Any]) -> Any:
    for item in items:
        yield item


class _Cancelling:
    """A client whose ``runs.cancel`` records its call (and fails when asked to)."""

    def __init__(self, *, aio: bool, fails: bool = False) -> None:
        calls: list[Any] = []
        self.calls = calls

        class Runs:
            def cancel(self, thread_id: str, run_id: str, wait: bool) -> Any:
                calls.append((thread_id, run_id, wait))
                if fails:
                    raise RuntimeError("server gone")
                return _value(None, aio)

        class Threads:
            def __init__(self) -> None:
                self.made: list[_SdkThread] = []

            def stream(self, **kwargs: Any) -> _SdkThread:
                self.made.append(_SdkThread(aio=aio))
                return self.made[-1]

        self.runs = Runs()
        self.threads = Threads()


def test_a_sync_v3_run_stream_reads_the_sdks_projections_and_aborts_the_run() -> None:
    client = _Cancelling(aio=False)
    remote = RemoteGraph("agent", sync_client=client)
    with remote.stream_events({"topic": "tea"}, version="v3") as run:
        sdk = client.threads.made[-1]
        assert (run.values, run.messages, run.tool_calls, run.subgraphs) == (
            ["v"],
            ["m"],
            ["t"],
            ["s"],
        )
        assert (run.output, run.interrupted, run.interrupts) == (
            {"done": True},
            True,
            [{"value": "why?"}],
        )
        assert list(run.extensions["updates"]) == [{"n": 1}]
        assert list(run.extensions["tasks"]) == [{"t": 1}]
        assert run.extensions["mine"] == ["x"]
        assert len(run.extensions) == 8
        assert list(run) == sdk.wire
        assert iter(run) is iter(run)  # one subscription to the raw events
        assert list(run.interleave("values", "updates")) == [
            ("values", "item"),
            ("updates", "item"),
        ]
        run.abort()
        run.abort()  # once only
    assert client.calls == [("t1", "r1", False)]
    assert sdk.calls[-1] == "close"
    with pytest.raises(RuntimeError, match="closed"):
        run.__enter__()


def test_a_v3_run_stream_leaves_the_sdks_stream_when_the_start_fails() -> None:
    from durable_debug.pregel.remote_stream import RemoteGraphRunStream

    sdk = _SdkThread(start_error=RuntimeError("start boom"))
    run = RemoteGraphRunStream(
        sync_client=_Cancelling(aio=False, fails=True),
        sdk_thread=sdk,
        input=None,
        config=None,
        metadata=None,
    )
    with pytest.raises(RuntimeError, match="start boom"), run:
        pytest.fail("the body must not run")
    assert sdk.calls[0] == "enter" and sdk.calls[-1] == ("exit", RuntimeError)
    run.abort()  # never started: nothing to cancel, the stream is closed already


async def test_an_async_v3_run_stream_reads_the_sdks_projections_and_aborts_the_run() -> None:
    client = _Cancelling(aio=True, fails=True)
    remote = RemoteGraph("agent", client=client)
    run = await remote.astream_events(
        {"topic": "tea"}, {"configurable": {"thread_id": "t1"}}, version="v3"
    )
    async with run:
        sdk = client.threads.made[-1]
        assert await run.output() == {"done": True}
        assert (await run.interrupted(), await run.interrupts()) == (True, [{"value": "why?"}])
        assert [item async for item in run.extensions["updates"]] == [{"n": 1}]
        assert run.values == ["v"]
        assert run.__aiter__() is run.__aiter__()
        assert [event async for event in run] == sdk.wire
        await run.abort()  # the cancel fails: logged, the stream still closes
        await run.abort()
    assert client.calls == [("t1", "r1", False)]
    assert sdk.calls[-1] == "close"
    with pytest.raises(NotImplementedError, match="not implemented"):
        await remote.astream_events({}, version="v2")
    with pytest.raises(NotImplementedError, match="interrupt_before"):
        await remote.astream_events({}, version="v3", interrupt_before=["a"])


async def test_an_async_v3_run_stream_leaves_the_sdks_stream_when_the_start_fails() -> None:
    from durable_debug.pregel.remote_stream import AsyncRemoteGraphRunStream

    sdk = _SdkThread(aio=True, start_error=RuntimeError("start boom"))
    run = AsyncRemoteGraphRunStream(
        client=_Cancelling(aio=True), sdk_thread=sdk, input=None, config=None, metadata=None
    )
    with pytest.raises(RuntimeError, match="start boom"):
        async with run:
            pytest.fail("the body must not run")
    assert sdk.calls[-1] == ("exit", RuntimeError)
    await run.__aexit__(None, None, None)  # leaving twice does nothing more
    with pytest.raises(RuntimeError, match="closed"):
        await run.__aenter__()


@pytest.mark.parity
@pytest.mark.parametrize("headers", [None, {"baggage": "team=a", "x": "y"}])
def test_distributed_tracing_sends_langsmiths_headers_as_langgraph_does(
    headers: dict[str, str] | None,
) -> None:
    from unittest import mock

    import langsmith

    api = FakeApi(deployed(("draft", draft)))
    sent = []
    for remote in remotes(api, distributed_tracing=True):
        given = dict(headers) if headers else None
        with (
            langsmith.tracing_context(enabled=True, client=mock.Mock()),
            langsmith.trace("caller") as run_tree,
        ):
            remote.invoke({"topic": "tea"}, thread("a"), headers=given)
            tracing = run_tree.to_headers()
        if isinstance(remote, RemoteGraph):  # ours leaves the caller's dict as it was
            assert given == (dict(headers) if headers else None)
        got = api.headers[-1]
        baggage = f"{headers['baggage']},{tracing['baggage']}" if headers else tracing["baggage"]
        assert got["langsmith-trace"] == tracing["langsmith-trace"]
        assert got["baggage"] == baggage
        sent.append(sorted(k for k in got if k in {"x", "baggage", "langsmith-trace"}))
    assert sent[0] == sent[1]
    # Outside a traced run nothing is added.
    ours, _ = remotes(api, distributed_tracing=True)
    ours.invoke({"topic": "tea"}, thread("b"), headers={"x": "y"})
    assert "langsmith-trace" not in api.headers[-1] and api.headers[-1]["x"] == "y"


async def test_the_debugger_shows_the_local_task_paused_on_the_remote_interrupt() -> None:
    from durable_debug import inspect as ddi

    api = FakeApi(deployed(("draft", draft), ("ask", ask)))
    ours, _ = remotes(api)
    graph = local_graph(api, ours)
    config = thread("debugged")
    await graph.ainvoke({"topic": "tea"}, config)
    detail = await ddi.acheckpoint_detail(graph, config)
    assert detail["next"] == ["agent"]
    [task] = detail["tasks"]
    assert task["name"] == "agent"
    assert [i["value"] for i in task["interrupts"]] == [{"question": "publish tea?"}]
    frame = await ddi.ahistory_frame(graph, config)
    assert frame["interrupts"].tolist() == [0, 1]


@pytest.mark.parity
def test_v2_parts_and_messages_match_langgraphs_remote_graph() -> None:
    from langgraph.pregel.remote import RemoteGraph as LangGraphRemote

    events = [
        ("metadata", {"run_id": "r1"}),
        ("messages", [{"content": "hi", "type": "AIMessageChunk"}, {"langgraph_node": "n"}]),
        ("values|sub:1", {"y": 1}),
        ("values", {"x": 1, "__interrupt__": [{"value": "why?", "id": "i1"}]}),
        ("updates", {"__interrupt__": [{"value": "why?", "id": "i1"}]}),
    ]
    calls = [
        {"stream_mode": ["values", "messages"], "version": "v2"},
        {"stream_mode": ["values", "messages"], "subgraphs": True, "version": "v2"},
        {"stream_mode": "messages"},
        {"stream_mode": ["messages", "values"], "subgraphs": True},
    ]
    for kwargs in calls:
        got = list(RemoteGraph("a", sync_client=_Scripted(events)).stream({}, **kwargs))
        expected = list(LangGraphRemote("a", sync_client=_Scripted(events)).stream({}, **kwargs))
        assert normalized(got) == normalized(expected), kwargs
    out = RemoteGraph("a", sync_client=_Scripted(events)).invoke({}, version="v2")
    assert (out.value, out.interrupts) == ({"x": 1}, (Interrupt("why?", "i1"),))
    assert RemoteGraph("a", sync_client=_Scripted([])).invoke({}) is None


def test_get_graph_without_langchain_draws_with_the_engines_classes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from durable_debug.graph.drawing import DrawableGraph

    monkeypatch.setitem(sys.modules, "langchain_core.runnables.graph", None)
    api = FakeApi(deployed(("draft", draft)))
    ours, _ = remotes(api)
    drawn = ours.get_graph()
    assert isinstance(drawn, DrawableGraph)
    assert list(drawn.nodes) == ["__start__", "draft", "__end__"]
    assert drawn.nodes["draft"].name == "draft"


@pytest.mark.parity
async def test_a_paused_remote_node_counts_as_a_subgraph_in_get_state_as_with_langgraph() -> None:
    api = FakeApi(deployed(("draft", draft), ("ask", ask)))
    ours, theirs = remotes(api)
    seen = []
    for remote, langgraph in ((ours, False), (theirs, True)):
        graph = local_graph(api, remote, langgraph=langgraph)
        config = thread("counted")  # the same thread name: the server is asked the same
        await graph.ainvoke({"topic": "tea"}, config)
        [task] = (await graph.aget_state(config)).tasks
        try:  # the server is asked for the task namespace's state of the local thread
            await graph.aget_state(config, subgraphs=True)
        except Exception as exc:  # the fake server has no such namespace: both fail alike
            outcome = type(exc).__name__
        else:
            outcome = "answered"
        method, path, body = api.requests[-1]
        seen.append(normalized((task.state, outcome, method, path, body)))
        api.graph = deployed(("draft", draft), ("ask", ask))  # a fresh server thread
    assert seen[0] == seen[1]
    config = seen[0][0]["configurable"]
    assert config == {"thread_id": "counted", "checkpoint_ns": "agent:id0"}
    assert seen[0][3] == "/threads/counted/state/checkpoint"
