"""``create_react_agent``'s input and output JSON schemas, and the ``AgentState`` classes they
come from, as LangGraph gives them (its docstrings, message type and deprecation mark)."""

import warnings
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from parity_harness import Api, Trace, check_parity
from pydantic import BaseModel

pytestmark = pytest.mark.parity


def prebuilt(api: Api) -> tuple[Any, Any, Any]:
    """``create_react_agent``, ``AgentState``, ``AgentStateWithStructuredResponse``."""
    if api.name == "langgraph":
        from langgraph.prebuilt import chat_agent_executor as module
    else:
        from durable_debug.prebuilt import agent as module
    return (
        module.create_react_agent,
        module.AgentState,
        module.AgentStateWithStructuredResponse,
    )


@tool
def search_api(query: str) -> str:
    """Searches the API for the query."""
    return f"result for {query}"


class ToolModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> "ToolModel":
        return self


class Answer(BaseModel):
    text: str


def test_agent_json_schemas():
    def scenario(api: Api, trace: Trace) -> None:
        create_react_agent, agent_state, with_response = prebuilt(api)
        model = ToolModel(messages=iter([AIMessage(content="answer")]))

        class Mine(agent_state):  # type: ignore[misc,valid-type]  # the library's class
            extra: int

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # LangGraph's, for the import
            agents = {
                "default": create_react_agent(model, [search_api]),
                "response format": create_react_agent(model, [search_api], response_format=Answer),
                "own state": create_react_agent(model, [search_api], state_schema=Mine),
            }
        for name, agent in agents.items():
            trace.note(f"{name} input", agent.get_input_jsonschema())
            trace.note(f"{name} output", agent.get_output_jsonschema())
        trace.note("deprecated", [cls.__deprecated__ for cls in (agent_state, with_response)])

    ours = check_parity(scenario)
    assert ours["default input"]["deprecated"] is True
    assert ours["default input"]["description"] == "The state of the agent."
    items = ours["default input"]["properties"]["messages"]["items"]
    assert items == {"$ref": "#/$defs/BaseMessage"}


def test_subclassing_agent_state_warns_as_langgraph_does():
    def scenario(api: Api, trace: Trace) -> None:
        _, agent_state, _ = prebuilt(api)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            class Mine(agent_state):  # type: ignore[misc,valid-type]  # the library's class
                extra: int

            Mine(messages=[], extra=1)
        trace.note("warned", [w.category.__name__ for w in caught])

    check_parity(scenario)
