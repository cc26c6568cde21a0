"""The LangGraph suite's expectations file (tests/langgraph_suite/expectations.txt) is
well-formed: it parses, every reason is one of the documented kinds with its detail, every
``difference:`` names an anchor docs/engine.md has, and no ``todo:`` (a failure ``--update``
added and nobody classified) is left. Needs no network and no LangGraph sdist."""

from __future__ import annotations

import pytest

from langgraph_suite import expectations as ex


def test_the_file_parses_and_every_reason_is_well_formed() -> None:
    entries = ex.load()
    assert entries, f"{ex.EXPECTATIONS} lists no test"
    anchors = ex.engine_anchors()
    problems = sorted(
        {
            f"line {e.line}: {p}"
            for e in entries.values()
            if (p := ex.reason_problem(e.reason, anchors))
        }
    )
    assert not problems, "\n".join(problems[:20])


def test_every_id_names_a_langgraph_test_file() -> None:
    bad = [i for i in ex.load() if not (i.startswith("tests/test_") and ".py" in i.split("::")[0])]
    assert not bad, bad[:10]


def test_the_file_is_written_in_the_order_update_writes_it() -> None:
    # --update rewrites the whole file; a hand edit in another order would make its diff noisy.
    text = ex.EXPECTATIONS.read_text(encoding="utf-8")
    assert ex.format_entries(ex.parse(text).values()) == text


def test_the_differences_section_has_an_anchor_per_difference() -> None:
    text = ex.ENGINE_DOC.read_text(encoding="utf-8")
    section = text.split("## Where we still differ from LangGraph on purpose", 1)[1].split(
        "\n## ", 1
    )[0]
    bullets = [line for line in section.splitlines() if line.startswith("* ")]
    assert bullets
    unanchored = [b[:60] for b in bullets if '<a id="diff-' not in b]
    assert not unanchored, unanchored


@pytest.mark.parametrize(
    ("reason", "problem"),
    [
        ("missing: langgraph.func.entrypoint", None),
        ("missing: entrypoint", "needs the dotted langgraph name"),
        ("private: langgraph._internal._constants", None),
        ("private: langgraph.graph.state", "needs a private dotted langgraph name"),
        ("difference: no-such-anchor", "docs/engine.md has no anchor 'no-such-anchor'"),
        ("bug: ", "needs a one-line cause"),
        ("bug: interrupt() without a checkpointer raises", None),
        ("flaky: timing of a cancelled save", None),
        ("fails on langgraph", None),
        ("fails on langgraph: skipped", None),
        ("todo: AssertionError: assert 1 == 2", "replace 'todo:' with its cause"),
        ("wontfix: whatever", "unknown kind 'wontfix'"),
    ],
)
def test_reason_problem_names_what_is_wrong(reason: str, problem: str | None) -> None:
    found = ex.reason_problem(reason, {"diff-unknown-key"})
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


def test_a_malformed_file_is_refused_with_its_line() -> None:
    with pytest.raises(ex.ExpectationsError, match=r"x.txt:2: test id 'tests/test_a.py::t'"):
        ex.parse("# c\ntests/test_a.py::t\n", "x.txt")
    with pytest.raises(ex.ExpectationsError, match=r"x.txt:4: .* listed twice .* line 2"):
        ex.parse("[bug: b]\ntests/test_a.py::t\n[bug: c]\ntests/test_a.py::t\n", "x.txt")


def test_a_file_entry_covers_its_tests() -> None:
    entries = ex.parse("[missing: langgraph.func.task]\ntests/test_a.py\n")
    entry = ex.covering("tests/test_a.py::test_x[memory]", entries)
    assert entry is not None and entry.reason == "missing: langgraph.func.task"
    assert ex.covering("tests/test_b.py::test_x", entries) is None


def test_a_placeholder_raises_naming_the_api_on_use_but_can_be_named() -> None:
    from langgraph_suite.redirect import MissingLangGraphAPI, PrivateLangGraphImport, placeholder

    entrypoint = placeholder("langgraph.func.entrypoint")
    assert repr(entrypoint) == "<missing langgraph.func.entrypoint>"
    with pytest.raises(MissingLangGraphAPI, match=r"^langgraph\.func\.entrypoint$"):
        entrypoint()
    with pytest.raises(MissingLangGraphAPI):
        isinstance(object(), entrypoint)

    class Sub(entrypoint):  # type: ignore[misc,valid-type]  # defining a subclass works
        pass

    with pytest.raises(MissingLangGraphAPI):
        Sub()
    constant = placeholder("langgraph._internal._constants.PULL", private=True)
    with pytest.raises(PrivateLangGraphImport, match="PULL"):
        f"{constant}"


def test_guard_makes_a_failing_module_level_statement_fail_only_its_users() -> None:
    from langgraph_suite.guard import guard_source

    source = (
        '"""doc"""\nfrom __future__ import annotations\n\n'
        "State = undefined_name('x')\nOK = 1\n\n"
        "def test_uses_state():\n    State()\n\n"
        "def test_ok():\n    assert OK == 1\n"
    )
    namespace: dict[str, object] = {"__name__": "tests.test_example"}
    exec(compile(guard_source(source, "test_example.py"), "test_example.py", "exec"), namespace)
    assert namespace["OK"] == 1
    namespace["test_ok"]()  # type: ignore[operator]
    with pytest.raises(NameError, match="undefined_name"):
        namespace["test_uses_state"]()  # type: ignore[operator]
