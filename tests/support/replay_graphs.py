"""A small agent whose model and tool count their calls, for the record-and-replay tests.

agent = Agent(saver)                     # nodes "plan" then "answer"
agent.graph.invoke({"messages": [("user", "hi")]}, config)
agent.model.calls, agent.tool_calls      # how often each was really called
agent.prompts["answer"] = "Be verbose."  # the code changed: "answer"'s second call differs
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from pydantic import PrivateAttr

import durable_debug as dd
from durable_debug.graph.effects import once


class CountingModel(BaseChatModel):
    """A chat model that answers with its call count and the last message, and counts."""

    _calls: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "counting"

    @property
    def calls(self) -> int:
        """How many times the model was really called."""
        return self._calls

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self._calls += 1
        text = f"answer {self._calls} to {messages[-1].content}"
        usage = {
            "input_tokens": len(messages),
            "output_tokens": 3,
            "total_tokens": len(messages) + 3,
        }
        return ChatResult(
            generations=[ChatGeneration(message=AIMessage(text, usage_metadata=usage))]
        )


class Agent:
    """The graph, its model, its tool's call count and the prompts its nodes read."""

    def __init__(self, saver: Any) -> None:
        self.model = CountingModel()
        self.tool_calls = 0
        self.effects = 0
        self.prompts = {"plan": "Plan briefly.", "answer": "Be terse."}

        @tool
        def lookup(topic: str) -> str:
            """Look a topic up."""
            self.tool_calls += 1
            return f"facts about {topic} #{self.tool_calls}"

        def stamp(label: str) -> str:
            self.effects += 1
            return f"{label}-{self.effects}"

        def plan(state: dd.MessagesState) -> dict[str, Any]:
            reply = self.model.invoke([SystemMessage(self.prompts["plan"]), *state["messages"]])
            return {"messages": [reply]}

        def answer(state: dd.MessagesState) -> dict[str, Any]:
            facts = lookup.invoke({"topic": str(state["messages"][0].content)})
            first = self.model.invoke([SystemMessage("Summarize."), *state["messages"]])
            second = self.model.invoke([SystemMessage(self.prompts["answer"]), first])
            mark = once(stamp, "answered")
            return {"messages": [AIMessage(f"{second.content} | {facts} | {mark}")]}

        self.graph = (
            dd.StateGraph(dd.MessagesState)
            .add_node("plan", plan)
            .add_node("answer", answer)
            .add_edge(dd.START, "plan")
            .add_edge("plan", "answer")
            .compile(checkpointer=saver)
        )


APP = Agent(None)
"""One agent for the command line tests (``--graph support.replay_graphs:app_graph``)."""


def app_graph() -> Any:
    """The graph of :data:`APP`, compiled without a saver (the command gives it the store's)."""
    return APP.graph
