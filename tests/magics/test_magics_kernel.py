"""The extension in a real Jupyter kernel (nbclient): top-level await inside %%graph, the
counts display, and the notebooks' counters for notebook 02, notebook 07 and notebook 08 exactly."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from support.seed_graphs import source

SRC = str(Path(__file__).resolve().parents[2] / "src")

START = '{"prep": "", "decision": ""}'


EXTENSION = "durable_debug"


def cells(engine: str) -> dict[str, str]:
    """The notebook, cell by cell, keyed by a name the tests use."""
    return {
        "load": f"%load_ext {EXTENSION}",
        "s8_source": source(engine, "rerun_rule"),
        "s8_fix_b": (
            "%%graph --counts fix_b\n"
            f"first = await g.ainvoke({START}, cfg)\n"
            'await g.ainvoke(Command(resume="APPROVED"), cfg)\n'
        ),
        "s8_naive": (
            "%%graph --counts naive --no-widget\n"
            'c = {"configurable": {"thread_id": "naive"}}\n'
            f"await g_naive.ainvoke({START}, c)\n"
            'await g_naive.ainvoke(Command(resume="yes"), c);\n'
        ),
        "s8_first": (
            "%%graph --counts interrupt_first --no-widget\n"
            'c = {"configurable": {"thread_id": "first"}}\n'
            f"await g_first.ainvoke({START}, c)\n"
            'await g_first.ainvoke(Command(resume="yes"), c);\n'
        ),
        "s8_charges": "s8_charges = dict(charges)\ns8_first_value = first['__interrupt__'][0].id",
        "s2_source": source(engine, "resume"),
        "s2_fail": '%%graph --counts s2\nawait g.ainvoke({"log": []}, cfg)\n',
        "s2_fix": 'broken["c"] = False',
        "s2_resume": "%%graph --counts s2\nawait g.ainvoke(None, cfg)\n",
        "s7a_source": source(engine, "two_gates"),
        "s7a_invoke": '%%graph --no-widget\nawait g.ainvoke({"a": "", "b": ""}, cfg)\n',
        "s7a_resume_a": '%%graph --no-widget\nawait g.ainvoke(Command(resume="A-VALUE"), cfg)\n',
        "s7a_resume_b": ('%%graph --counts s7a\nawait g.ainvoke(Command(resume="B-VALUE"), cfg)\n'),
        "s7b_source": source(engine, "reviews"),
        "s7b": (
            "%%graph --counts s7b\n"
            'r = await g.ainvoke({"items": ["doc-X", "doc-Y", "doc-Z"], "approvals": []}, cfg)\n'
            'answers = {i.id: ("REJECT" if i.value["review_item"] == "doc-Y" else "APPROVE")\n'
            '           for i in r["__interrupt__"]}\n'
            "final = await g.ainvoke(Command(resume=answers), cfg)\n"
            'final["approvals"]\n'
        ),
        "report": (
            "import json\n"
            "frames = dict(fix_b=fix_b, naive=naive, interrupt_first=interrupt_first, s2=s2,\n"
            "              s7a=s7a, s7b=s7b)\n"
            "print(json.dumps({'summaries': {k: v.summary.tolist() for k, v in frames.items()},\n"
            "                  'charges': s8_charges, 'calls': calls}))\n"
        ),
    }


@pytest.fixture(scope="module", params=["durable_debug", "langgraph"])
def notebook(request: pytest.FixtureRequest):
    """Execute the whole notebook once per engine in a fresh kernel; cells by name."""
    named = cells(request.param)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(code) for code in named.values()]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
        NotebookClient(nb, kernel_name="python3", timeout=120, allow_errors=True).execute()
    return dict(zip(named, nb.cells, strict=True))


def texts(cell) -> list[tuple[str, str]]:
    """(output type, text) for each output of a cell, in order."""
    found = []
    for output in cell.outputs:
        if output.output_type == "error":
            found.append(("error", f"{output.ename}: {output.evalue}"))
        elif output.output_type == "stream":
            found.append(("stream", output.text))
        else:
            found.append((output.output_type, output.data.get("text/plain", "")))
    return found


def test_top_level_await_in_a_graph_cell_shows_counts_then_the_value(notebook):
    out = texts(notebook["s8_fix_b"])
    kinds = [kind for kind, _ in out]
    assert "error" not in kinds
    counts = next(text for kind, text in out if kind == "display_data")
    assert "prepare 1" in counts and "gate 2 (re-ran 1×)" in counts
    assert kinds[-1] == "execute_result"
    assert out[-1][1] == "{'prep': 'expensive', 'decision': 'APPROVED'}"
    # Then the TimeTravel widget for the thread (its text/plain is the widget's repr).
    display = [text for kind, text in out if kind == "display_data"]
    assert len(display) == 2 and display[1].startswith("<TimeTravel thread 'hitl-1'")
    shown = [o for o in notebook["s8_fix_b"].outputs if o.output_type == "display_data"][1]
    assert "application/vnd.jupyter.widget-view+json" in shown.data


def test_a_failing_cell_shows_counts_then_the_exception(notebook):
    out = texts(notebook["s2_fail"])
    assert out[0][0] == "display_data" and "c 1" in out[0][1]
    assert out[-1] == ("error", "RuntimeError: c is broken")
    resumed = texts(notebook["s2_resume"])
    assert "c 2 (re-ran 1×)" in resumed[0][1]


def test_counts_are_the_seed_counters(notebook):
    (report,) = [text for kind, text in texts(notebook["report"]) if kind == "stream"]
    data = json.loads(report)
    assert data["summaries"] == {
        "fix_b": ["prepare 1", "gate 2 (re-ran 1×)"],  # notebook 08 fix B
        "naive": ["node 2 (re-ran 1×)"],  # notebook 08: the naive node runs twice
        "interrupt_first": ["node 2 (re-ran 1×)"],  # notebook 08 fix A: the node still re-runs…
        "s2": ["a 1", "b 1", "c 2 (re-ran 1×)"],  # notebook 02
        "s7a": ["two_gates 3 (re-ran 2×)"],  # notebook 07 (a): two resumes
        "s7b": ["review 6 (re-ran 3×)"],  # notebook 07 (b): three branches, one resume
    }
    # …but only the naive node's side effect doubles; fix A's runs once, fix B's once.
    assert data["charges"] == {"naive": 2, "interrupt_first": 1, "prepare": 1}
    assert data["calls"] == {"a": 1, "b": 1, "c": 2}


def test_the_cell_value_and_names_survive(notebook):
    out = texts(notebook["s7b"])
    assert out[-1] == ("execute_result", "['doc-X=APPROVE', 'doc-Y=REJECT', 'doc-Z=APPROVE']")
    assert all(kind != "error" for kind, _ in texts(notebook["s8_charges"]))  # `first` defined
