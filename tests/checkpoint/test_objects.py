"""User classes in checkpoints without ``register_type``: the writing process trusts what it
saves; another process rebuilds a class only when it is registered, in the safe set
(LangChain messages), or already imported and allowed; otherwise it reads a tagged dict."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from durable_debug import START, MemorySaver, StateGraph
from durable_debug.checkpoint import objects
from durable_debug.checkpoint.serde import MsgpackSerializer, TypeRegistry

SHOP = """
import dataclasses, enum
import pydantic

class Size(enum.Enum):
    S = "s"
    L = "l"

@dataclasses.dataclass
class Item:
    sku: str
    size: Size

class Order(pydantic.BaseModel):
    items: list
    paid: bool = False
"""

WRITE = """
import sys
from typing_extensions import TypedDict
from langchain_core.messages import AIMessage
from durable_debug import SqliteSaver, StateGraph, START
import shop

class State(TypedDict):
    order: object
    size: object
    reply: object

def take(state):
    order = shop.Order(items=[shop.Item("a1", shop.Size.L)])
    return {"order": order, "reply": AIMessage("ok", id="r")}

graph = StateGraph(State).add_node("take", take).add_edge(START, "take")
app = graph.compile(checkpointer=SqliteSaver(sys.argv[1]))
app.invoke({"size": shop.Size.S}, {"configurable": {"thread_id": "t"}})
print(type(app.get_state({"configurable": {"thread_id": "t"}}).values["order"]).__name__)
"""

READ = """
import json, sys
from durable_debug.checkpoint.sqlite import SqliteSaver
if sys.argv[2] == "import":
    import shop
saver = SqliteSaver(sys.argv[1])
values = saver.get_tuple({"configurable": {"thread_id": "t"}}).checkpoint["channel_values"]
print(json.dumps({k: type(v).__name__ if not isinstance(v, dict) else v for k, v in values.items()
                  if k in ("order", "size", "reply")}, default=repr))
"""


def run(tmp_path: Path, script: str, *args: str, env: dict[str, str] | None = None) -> str:
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    environ = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]),
        **(env or {}),
    }
    environ.pop(objects.ALLOW_ENV, None) if not env else None
    done = subprocess.run(
        [sys.executable, str(path), *args], capture_output=True, text=True, env=environ
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_another_process_rebuilds_only_trusted_classes(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP)
    db = str(tmp_path / "shop.db")
    assert run(tmp_path, WRITE, db) == "Order"  # the writer reads its own classes back

    untrusted = json.loads(run(tmp_path, READ, db, "import"))
    assert untrusted["order"] == {
        "__type__": "shop.Order",
        "items": [
            {
                "__type__": "shop.Item",
                "sku": "a1",
                "size": {"__type__": "shop.Size", "value": "l"},
            }
        ],
        "paid": False,
    }
    assert untrusted["size"] == {"__type__": "shop.Size", "value": "s"}
    assert untrusted["reply"] == "AIMessage"  # LangChain messages are in the safe set

    allowed = json.loads(run(tmp_path, READ, db, "import", env={objects.ALLOW_ENV: "shop"}))
    assert allowed == {"order": "Order", "size": "Size", "reply": "AIMessage"}

    # Allowed but never imported: the loader does not import it.
    not_imported = json.loads(run(tmp_path, READ, db, "-", env={objects.ALLOW_ENV: "shop"}))
    assert not_imported["size"] == {"__type__": "shop.Size", "value": "s"}


def test_allow_types_by_name_and_registered_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    import enum

    class Mood(enum.Enum):
        OK = 1

    serde = MsgpackSerializer(TypeRegistry())
    blob = serde.dumps_typed([Mood.OK])
    monkeypatch.setattr(objects, "_written", {})  # as if another process read the blob
    monkeypatch.setattr(objects, "_allowed", set())
    name = f"{__name__}.{Mood.__qualname__}"
    assert serde.loads_typed(blob) == [{"__type__": name, "value": 1}]
    objects.allow_types(name.rsplit(".", 1)[0])  # a local class: no module path reaches it
    assert serde.loads_typed(blob) == [{"__type__": name, "value": 1}]
    serde.registry.register(Mood)  # registered in the reader: rebuilt by qualified name
    assert serde.loads_typed(blob) == [Mood.OK]
    with pytest.raises(ValueError, match="class names or module prefixes"):
        objects.allow_types("")


def test_unloaded_object_is_saved_again_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread holding a class this process cannot rebuild still runs and forks."""

    from typing_extensions import TypedDict

    class S(TypedDict):
        thing: object
        n: int

    graph = StateGraph(S).add_node("inc", lambda s: {"n": s["n"] + 1}).add_edge(START, "inc")
    app = graph.compile(checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    tagged = {"__type__": "elsewhere.Thing", "x": 1}
    app.invoke({"thing": tagged, "n": 0}, cfg)
    app.invoke({"n": 5}, cfg)
    assert app.get_state(cfg).values == {"thing": tagged, "n": 6}
