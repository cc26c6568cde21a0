"""Every code sample of the scenarios of notebooks 01–08 and the production notebook's
interrupt_before sample, run as a notebook would run it (top-level ``await``), with only the
imports changed to durable_debug.

The samples live in ``seed_samples/``, the example code the notebooks teach with;
lines a fragment needs around it (the graph, counters) are marked ``# scaffolding``. Each test
asserts on what the sample prints or leaves behind.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import io
import re
from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).parent / "seed_samples"


def run_sample(name: str) -> tuple[list[str], dict[str, Any]]:
    """Execute a sample with top-level await; return its printed lines and its namespace."""
    source = (SAMPLES / f"{name}.py").read_text()
    code = compile(
        source, f"{name}.py", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
    )
    namespace: dict[str, Any] = {"__name__": f"seed_{name}"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = eval(code, namespace)
        if inspect.iscoroutine(result):
            asyncio.run(result)
    return out.getvalue().splitlines(), namespace


def test_s1_history_newest_first_log_accumulates_value_overwritten() -> None:
    lines, _ = run_sample("s1_checkpoint_model")
    assert lines == [
        "2 () B ['ran A', 'ran B']",
        "1 ('b',) A ['ran A']",
        "0 ('a',)  []",
        "-1 ('__start__',) None []",
    ]


def test_s2_resume_runs_only_c_and_the_classic_bug_reruns_everything() -> None:
    lines, _ = run_sample("s2_resume")
    assert lines[0] == "run 1 failed: c raises"
    assert lines[1] == "next = ('c',)"
    # RIGHT: resume with None runs only c; a and b come from the checkpoint.
    assert lines[2] == "run 2 ran: ['c'] log: ['a ok', 'b ok', 'c ok']"
    # WRONG: fresh input re-runs from the top, and the log shows a and b twice.
    assert (
        lines[3] == "classic bug ran: ['a', 'b', 'c'] log: ['a ok', 'b ok', 'a ok', 'b ok', 'c ok']"
    )


def test_s3_fork_grows_a_second_branch_and_keeps_the_first() -> None:
    lines, _ = run_sample("s3_fork")
    # Newest first: the fork's branch (update at step 2, then b at step 3), then the original.
    assert lines == [
        "3 loop B",
        "2 update FORKED",
        "2 loop B",
        "1 loop A",
        "0 loop ",
        "-1 input -",
    ]


async def test_s3_fork_checkpoint_is_a_child_of_the_step_1_checkpoint() -> None:
    _, ns = await asyncio.to_thread(run_sample, "s3_fork")
    g, cfg, target, new_cfg = ns["g"], ns["cfg"], ns["target"], ns["new_cfg"]
    history = [s async for s in g.aget_state_history(cfg)]
    by_id = {s.config["configurable"]["checkpoint_id"]: s for s in history}
    fork = by_id[new_cfg["configurable"]["checkpoint_id"]]
    assert fork.metadata["source"] == "update"
    assert fork.metadata["step"] == 2
    assert fork.parent_config == target
    children = [s for s in history if s.parent_config == target]
    assert sorted(s.metadata["source"] for s in children) == ["loop", "update"]
    original = next(s for s in children if s.metadata["source"] == "loop")
    assert original.values == {"value": "B", "log": ["ran A", "ran B"]}


def test_s4_finished_task_is_not_rerun_after_its_sibling_failed() -> None:
    lines, _ = run_sample("s4_pending_writes")
    assert lines[0] == "step failed: B lost its connection"
    pending = "pending writes: [('results', ['A']), ('__error__', \"ConnectionError('B lost"
    assert lines[1] == pending + " its connection')\")]"
    assert lines[2] == "after resume: ['A', 'B'] {'A': 1, 'B': 2}"


def test_s5_send_merges_in_fan_out_order_and_plain_key_refuses_two_writes() -> None:
    lines, _ = run_sample("s5_reducers")
    assert lines[0] == "merged    : {'x': 'done', 'y': 'done', 'z': 'done'}"
    assert lines[1] == "collected : ['x', 'y', 'z']"
    assert lines[2] == (
        "InvalidUpdateError: At key 'single': Can receive only one value per step. "
        "Use an Annotated key to handle multiple values."
    )


def test_s6_interrupt_pauses_and_command_resume_continues() -> None:
    lines, _ = run_sample("s6_hitl")
    assert re.fullmatch(
        r"\[Interrupt\(value=\{'question': 'approve this plan\?', 'plan': 'deploy'\}, "
        r"id='[0-9a-f]{32}', response_schema=None\)\]",
        lines[0],
    )
    assert lines[1] == "('gate',)"
    assert lines[2] == "APPROVED"


def test_s7_sequential_interrupts_need_two_resumes_and_parallel_ones_one_map() -> None:
    lines, _ = run_sample("s7_multiple_interrupts")
    assert lines == [
        "invoke    -> [{'ask': 'A?'}]",
        "resume A  -> [{'ask': 'B?'}]",
        "resume B  -> {'a': 'A-VALUE', 'b': 'B-VALUE'}",
        "pending   -> ['doc-X', 'doc-Y', 'doc-Z']",
        "approvals -> ['doc-X=APPROVE', 'doc-Y=REJECT', 'doc-Z=APPROVE']",
    ]


def test_s8_rerun_rule_counters() -> None:
    lines, _ = run_sample("s8_rerun_rule")
    assert lines == [
        "naive: charge_customer ran 2x",
        "fix-a: charge_customer ran 1x",
        "prepare executed : 1",
        "gate    executed : 2",
        "final prep       : prepared",
    ]


def test_s004_interrupt_before_then_update_state_then_resume_sync_api() -> None:
    lines, ns = run_sample("s004_interrupt_before")
    assert lines[0] == (
        "paused: {'ticket': 'printer on fire', 'draft': 'Re: printer on fire'} "
        "('send_response',) []"
    )
    assert lines[1] == "done: Re: printer on fire [('Re: printer on fire', True, 'josh')]"
    history = list(ns["graph"].get_state_history(ns["config"]))
    assert [(s.metadata["step"], s.metadata["source"], s.next) for s in history] == [
        (3, "loop", ()),
        (2, "update", ("send_response",)),
        (1, "loop", ("send_response",)),
        (0, "loop", ("draft_response",)),
        (-1, "input", ("__start__",)),
    ]
