"""Embedding calls, plain (non-chat) LLM calls and a chat model's direct ``stream`` inside a
node are recorded and replayed like the chat model's ``invoke``, on every saver."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, TypedDict

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessageChunk, HumanMessage
from pydantic import PrivateAttr

import durable_debug as dd
from durable_debug.inspect import history_frame
from durable_debug.inspect.replay import recorded_calls, replay_check, replaying

CFG = {"configurable": {"thread_id": "t"}}


class CountingEmbeddings(DeterministicFakeEmbedding):
    """Deterministic vectors, counting each real call."""

    _calls: int = PrivateAttr(default=0)

    def embed_query(self, text: str) -> list[float]:
        self._calls += 1
        return super().embed_query(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self._calls += 1
        return super().embed_documents(texts)


class CountingLLM(FakeListLLM):
    """A plain LLM answering from its list, counting each real call."""

    _calls: int = PrivateAttr(default=0)

    def _call(self, prompt: str, stop: Any = None, run_manager: Any = None, **kw: Any) -> str:
        self._calls += 1
        return f"draft {self._calls}: {prompt}"


class CountingStreamer(FakeListChatModel):
    """A chat model streaming its answer a character at a time, counting each real call."""

    _calls: int = PrivateAttr(default=0)

    def _stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        self._calls += 1
        yield from super()._stream(*args, **kwargs)

    async def _astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        self._calls += 1
        async for chunk in super()._astream(*args, **kwargs):
            yield chunk


class RagState(TypedDict, total=False):
    question: str
    score: float
    draft: str
    answer: str
    pieces: int


class Rag:
    """retrieve (two embedding calls) → draft (an LLM call) → answer (a chat model stream)."""

    def __init__(self, saver: Any) -> None:
        self.embeddings = CountingEmbeddings(size=4)
        self.llm = CountingLLM(responses=["unused"])
        self.chat = CountingStreamer(responses=["tides rise"])
        self.prompt = "Draft about"

        def retrieve(state: dict[str, Any]) -> dict[str, Any]:
            query = self.embeddings.embed_query(state["question"])
            docs = self.embeddings.embed_documents(["moon", "sea"])
            return {"score": round(float(sum(query) + sum(docs[0]) + sum(docs[1])), 6)}

        def draft(state: dict[str, Any]) -> dict[str, Any]:
            return {"draft": self.llm.invoke(f"{self.prompt} {state['question']}")}

        def answer(state: dict[str, Any]) -> dict[str, Any]:
            parts = [c.content for c in self.chat.stream([HumanMessage(state["draft"])])]
            return {"answer": "".join(parts), "pieces": len(parts)}

        self.graph = (
            dd.StateGraph(RagState)
            .add_node("retrieve", retrieve)
            .add_node("draft", draft)
            .add_node("answer", answer)
            .add_edge(dd.START, "retrieve")
            .add_edge("retrieve", "draft")
            .add_edge("draft", "answer")
            .compile(checkpointer=saver)
        )

    @property
    def calls(self) -> tuple[int, int, int]:
        """Real calls of the embeddings, the LLM and the chat model."""
        return self.embeddings._calls, self.llm._calls, self.chat._calls


def _first(graph: Any) -> dict[str, Any]:
    frame = history_frame(graph, CFG)
    first = frame[frame["step"] == -1]["checkpoint_id"].iloc[0]
    return {"configurable": {"thread_id": "t", "checkpoint_id": first}}


@pytest.fixture
def rag(every_saver: Any) -> Rag:
    made = Rag(every_saver)
    out = made.graph.invoke({"question": "tides"}, CFG)
    assert made.calls == (2, 1, 1)
    assert (out["answer"], out["pieces"]) == ("tides rise", 10)  # a chunk per character
    return made


def test_embedding_llm_and_stream_calls_are_recorded(rag: Rag) -> None:
    frame = recorded_calls(rag.graph, CFG)
    assert frame[["node", "kind", "name", "index"]].values.tolist() == [
        ["retrieve", "embedding", "CountingEmbeddings.embed_query", 0],
        ["retrieve", "embedding", "CountingEmbeddings.embed_documents", 1],
        ["draft", "llm", "CountingLLM", 0],
        ["answer", "chat_model", "CountingStreamer", 0],
    ]
    assert frame["output"].tolist() == [
        "vector of 4",
        "2 vectors of 4",
        "draft 1: Draft about tides",
        "tides rise",
    ]


def test_a_replayed_rerun_makes_no_call_and_streams_the_recorded_chunks(rag: Rag) -> None:
    recorded = rag.graph.get_state(CFG).values
    with replaying(rag.graph, CFG) as replay:
        out = rag.graph.invoke(None, _first(rag.graph))
    assert rag.calls == (2, 1, 1)
    assert replay.live == []
    assert [c["kind"] for c in replay.replayed] == ["embedding", "embedding", "llm", "chat_model"]
    assert {k: out[k] for k in ("score", "draft", "answer", "pieces")} == {
        k: recorded[k] for k in ("score", "draft", "answer", "pieces")
    }


def test_a_changed_llm_prompt_makes_the_llm_and_the_stream_live(rag: Rag) -> None:
    rag.prompt = "Write about"
    with replaying(rag.graph, CFG) as replay:
        out = rag.graph.invoke(None, _first(rag.graph))
    assert rag.calls == (2, 2, 2)
    assert [(c["node"], c["kind"]) for c in replay.live] == [
        ("draft", "llm"),
        ("answer", "chat_model"),
    ]
    assert out["draft"] == "draft 2: Write about tides"
    report = replay_check(rag.graph, CFG)
    assert [d["node"] for d in report.diverged] == ["draft"]


def test_stream_mode_messages_yields_the_recorded_tokens_on_a_replayed_run() -> None:
    rag = Rag(dd.MemorySaver())
    rag.graph.invoke({"question": "tides"}, CFG)

    def tokens(config: dict[str, Any]) -> list[str]:
        return [
            m.content
            for m, meta in rag.graph.stream(None, config, stream_mode="messages")
            if isinstance(m, AIMessageChunk) and meta["langgraph_node"] == "answer"
        ]

    with replaying(rag.graph, CFG):
        replayed = tokens(_first(rag.graph))
    assert rag.calls == (2, 1, 1)
    assert "".join(replayed) == "tides rise"
    assert len([t for t in replayed if t]) == 10


async def test_async_embedding_and_stream_calls_replay() -> None:
    embeddings = CountingEmbeddings(size=3)
    chat = CountingStreamer(responses=["ok"])

    async def node(state: dict[str, Any]) -> dict[str, Any]:
        vector = await embeddings.aembed_query(state["question"])
        parts = [c.content async for c in chat.astream(state["question"])]
        return {"answer": f"{len(vector)}:{''.join(parts)}"}

    graph = (
        dd.StateGraph(RagState)
        .add_node("node", node)
        .add_edge(dd.START, "node")
        .compile(checkpointer=dd.MemorySaver())
    )
    await graph.ainvoke({"question": "q"}, CFG)
    assert (embeddings._calls, chat._calls) == (1, 1)
    with replaying(graph, CFG) as replay:
        out = await graph.ainvoke(None, _first(graph))
    assert (embeddings._calls, chat._calls) == (1, 1)
    assert out["answer"] == "3:ok"
    assert [c["kind"] for c in replay.replayed] == ["embedding", "chat_model"]


def test_an_invoke_streamed_for_stream_mode_messages_replays_its_tokens() -> None:
    chat = CountingStreamer(responses=["hello there"])

    def bot(state: dd.MessagesState) -> dict[str, Any]:
        return {"messages": [chat.invoke(state["messages"])]}

    graph = (
        dd.StateGraph(dd.MessagesState)
        .add_node("bot", bot)
        .add_edge(dd.START, "bot")
        .compile(checkpointer=dd.MemorySaver())
    )

    def tokens(run_input: Any, config: dict[str, Any]) -> list[str]:
        return [
            m.content
            for m, _ in graph.stream(run_input, config, stream_mode="messages")
            if isinstance(m, AIMessageChunk)
        ]

    live = tokens({"messages": [("user", "hi")]}, CFG)
    assert live == list("hello there")
    with replaying(graph, CFG) as replay:
        assert tokens(None, _first(graph)) == live
    assert chat._calls == 1
    assert [c["kind"] for c in replay.replayed] == ["chat_model"]
