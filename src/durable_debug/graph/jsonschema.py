"""The JSON schemas of a compiled graph's input, output and context, as LangGraph gives them.

    graph.get_input_jsonschema()    # what the graph takes
    graph.get_output_jsonschema()   # what invoke returns
    graph.get_context_jsonschema()  # what runtime.context holds (None without a context schema)

A pydantic schema gives its own model schema and a TypedDict pydantic's schema of it (titled by
the class); any other state class (a dataclass, a class with annotations) gives an object
titled ``<graph name>Input`` / ``Output`` whose properties are its keys, each required unless
the class gives it a default, marks it ``NotRequired`` or declares it ``Optional`` (a default
of ``None``), as LangGraph's ``get_field_default`` decides; a one-value state gives that
value's schema with a ``None`` default. An ``@entrypoint`` gives the schema of its function's
first parameter and of its return value (``entrypoint.final[R, S]``: of ``R``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, get_args, get_origin

from typing_extensions import is_typeddict

if TYPE_CHECKING:
    import pydantic

__all__ = ["context_jsonschema", "root_jsonschema", "schema_title", "state_jsonschema"]


def _pydantic() -> Any:
    """pydantic, imported on the first schema asked for (durable_debug does not need it to run
    graphs); a clear error when it is not installed."""
    try:
        import pydantic
    except ImportError as error:
        raise ImportError(
            "A graph's JSON schemas are built with pydantic, which is not installed: "
            "pip install pydantic"
        ) from error
    return pydantic


@lru_cache(maxsize=1)
def _arbitrary() -> type[pydantic.BaseModel]:
    """The base of the models built here: any Python type may be a field's type."""
    pyd = _pydantic()
    base: type[pydantic.BaseModel] = type(
        "_Arbitrary",
        (pyd.BaseModel,),
        {"model_config": pyd.ConfigDict(arbitrary_types_allowed=True)},
    )
    return base


def schema_title(graph_name: str, suffix: str) -> str:
    """LangChain's ``Runnable.get_name(suffix)``: ``LangGraphInput`` for a capitalized name,
    ``agent_input`` otherwise."""
    if graph_name[:1].isupper():
        return graph_name + suffix.title()
    return f"{graph_name}_{suffix.lower()}"


def root_jsonschema(typ: Any, title: str, *, default: bool = False) -> dict[str, Any]:
    """The schema of one value of type ``typ``, titled ``title`` (with a ``None`` default
    when ``default``, as a one-value state's)."""
    model = _root_model(typ, title, default)
    return model.model_json_schema()


@lru_cache(maxsize=256)
def _root_model(typ: Any, title: str, default: bool) -> type[pydantic.BaseModel]:
    pyd = _pydantic()
    base = pyd.RootModel[typ]
    namespace: dict[str, Any] = {"model_config": pyd.ConfigDict(arbitrary_types_allowed=True)}
    if default:
        namespace["__annotations__"] = {"root": typ}
        namespace["root"] = None
    return type(title, (base,), namespace)


def state_jsonschema(
    schema: Any, kind: str, keys: Sequence[tuple[str, Any]], title: str
) -> dict[str, Any]:
    """The schema of a state class ``schema`` (``kind`` as ``StateSchema.kind`` names it)
    whose channels are ``keys`` (name, type), titled ``title`` when the class does not name
    itself (see the module docstring)."""
    if kind == "pydantic":
        result: dict[str, Any] = schema.model_json_schema()
        return result
    pyd = _pydantic()
    if kind == "typeddict":
        result = pyd.TypeAdapter(schema).json_schema()
        return result
    if kind == "root":
        typ = keys[0][1] if keys else Any
        return root_jsonschema(typ, title, default=True)
    fields: dict[str, Any] = {name: (typ, _field_default(name, typ, schema)) for name, typ in keys}
    model = pyd.create_model(title, __base__=_arbitrary(), **fields)
    result = model.model_json_schema()
    return result


def context_jsonschema(context_schema: Any) -> dict[str, Any] | None:
    """The schema of a graph's ``context_schema`` (None without one); a ValueError when it is
    not a pydantic model, TypedDict or dataclass, as in LangGraph."""
    if context_schema is None:
        return None
    pyd = _pydantic()
    if isinstance(context_schema, type) and issubclass(context_schema, pyd.BaseModel):
        own: dict[str, Any] = context_schema.model_json_schema()  # type: ignore[attr-defined]  # a pydantic model, checked just above
        return own
    if is_typeddict(context_schema) or dataclasses.is_dataclass(context_schema):
        result: dict[str, Any] = pyd.TypeAdapter(context_schema).json_schema()
        return result
    raise ValueError(
        f"Invalid context schema type: {context_schema}. Must be a BaseModel, TypedDict or "
        "dataclass."
    )


def _field_default(name: str, typ: Any, schema: Any) -> Any:
    """A key's default in the schema built for a class that is not pydantic: a dataclass
    field's default, else None for an optional type, else ``...`` (required)."""
    if dataclasses.is_dataclass(schema):
        for field in dataclasses.fields(schema):
            if field.name != name:
                continue
            if field.default is not dataclasses.MISSING and field.default is not ...:
                return field.default
            if field.default_factory is not dataclasses.MISSING:
                return field.default_factory()
    return None if _is_optional(typ) else ...


def _is_optional(typ: Any) -> bool:
    """Whether ``typ`` admits None (``Optional[X]``, ``X | None``, ``None``), as LangGraph
    tells (``Any`` does not)."""
    if isinstance(typ, types.UnionType) or get_origin(typ) is typing.Union:
        return any(arg is type(None) or _is_optional(arg) for arg in get_args(typ))
    if get_origin(typ) is typing.Annotated:
        return _is_optional(get_args(typ)[0])
    bound = getattr(typ, "__bound__", None)
    if bound is not None:
        return _is_optional(bound)
    return typ is None
