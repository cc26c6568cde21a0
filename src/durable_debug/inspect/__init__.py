"""durable_debug.inspect: a thread as data, usable without Jupyter.

    from durable_debug import inspect as ddi
    config = {"configurable": {"thread_id": "demo-1"}}
    dag = ddi.checkpoint_dag(graph, config)          # networkx tree; forks are branches
    ddi.history_frame(graph, config)                 # one row per checkpoint
    ddi.blobs_frame(graph, config)                   # version, new/shared, bytes per channel
    ddi.diff(old_id, new_id, graph=graph, config=config)
    ddi.recorded_calls(graph, config)                # every model / tool call, recorded
    ddi.replay_check(graph, config).ok               # the code now writes what it recorded
    with ddi.Recorder() as rec:                      # executions per (thread, node)
        await graph.ainvoke(None, config)
    rec.counts_frame()

Everything reads through the compiled-graph API and the saver protocol, so it works on a
durable_debug graph and on a LangGraph compiled graph alike. Every function that reads has an
async twin prefixed ``a`` (``ahistory_frame``…); the sync ones also work in a notebook cell.
"""

from __future__ import annotations

from durable_debug.inspect.dag import (
    Dag,
    DagNode,
    DagPosition,
    DagReader,
    acheckpoint_dag,
    adag_data,
    checkpoint_dag,
    dag_data,
    dag_layout,
)
from durable_debug.inspect.detail import (
    Blob,
    Detail,
    InterruptInfo,
    Task,
    Write,
    acheckpoint_detail,
    checkpoint_detail,
)
from durable_debug.inspect.diff import (
    DiffEntry,
    PathChange,
    achanges,
    adiff,
    adiff_frame,
    changes,
    diff,
    diff_data,
    diff_frame,
    diff_values,
)
from durable_debug.inspect.export import (
    aexport_html,
    aexport_jsonl,
    ahtml_data,
    export_html,
    export_jsonl,
    html_data,
)
from durable_debug.inspect.failures import FAILURE_CLASSES, POISON_AFTER, failure_classes
from durable_debug.inspect.findings import afindings, findings
from durable_debug.inspect.frames import (
    ablobs_frame,
    ahistory_frame,
    awrites_frame,
    blobs_frame,
    history_frame,
    writes_frame,
)
from durable_debug.inspect.health import (
    HEALTH_TABLES,
    acrashed_threads,
    ahealth,
    crashed_threads,
    health,
)
from durable_debug.inspect.jsonable import clip, to_jsonable
from durable_debug.inspect.locate import afind_graph, find_graph
from durable_debug.inspect.recorder import Execution, NodeCount, Recorder
from durable_debug.inspect.replay import (
    ReplayCheck,
    ReplayMismatchError,
    ReplaySource,
    TaskRun,
    adebug_task,
    arecorded_calls,
    areplay_check,
    areplay_source,
    debug_task,
    recorded_calls,
    replay_check,
    replaying,
)
from durable_debug.inspect.retention import (
    StuckThread,
    adelete_thread,
    aprune,
    asweep,
    delete_thread,
    prune,
    sweep,
)
from durable_debug.inspect.stats import StorageStats, astorage_stats, storage_stats
from durable_debug.inspect.thread import (
    CheckpointRecord,
    Thread,
    aread_checkpoint,
    aread_thread,
    asubgraph_namespaces,
    read_thread,
    subgraph_namespaces,
)
from durable_debug.inspect.topology import (
    GraphTopology,
    Topology,
    TopologyEdge,
    TopologyNode,
    atopology_data,
    topology,
    topology_data,
    topology_svg,
)

__all__ = [
    "FAILURE_CLASSES",
    "HEALTH_TABLES",
    "POISON_AFTER",
    "Blob",
    "CheckpointRecord",
    "Dag",
    "DagNode",
    "DagPosition",
    "DagReader",
    "Detail",
    "DiffEntry",
    "Execution",
    "GraphTopology",
    "InterruptInfo",
    "NodeCount",
    "PathChange",
    "Recorder",
    "ReplayCheck",
    "ReplayMismatchError",
    "ReplaySource",
    "StorageStats",
    "StuckThread",
    "Task",
    "TaskRun",
    "Thread",
    "Topology",
    "TopologyEdge",
    "TopologyNode",
    "Write",
    "ablobs_frame",
    "achanges",
    "acheckpoint_dag",
    "acheckpoint_detail",
    "acrashed_threads",
    "adag_data",
    "adebug_task",
    "adelete_thread",
    "adiff",
    "adiff_frame",
    "aexport_html",
    "aexport_jsonl",
    "afind_graph",
    "afindings",
    "ahealth",
    "ahistory_frame",
    "ahtml_data",
    "aprune",
    "aread_checkpoint",
    "aread_thread",
    "arecorded_calls",
    "areplay_check",
    "areplay_source",
    "astorage_stats",
    "asubgraph_namespaces",
    "asweep",
    "atopology_data",
    "awrites_frame",
    "blobs_frame",
    "changes",
    "checkpoint_dag",
    "checkpoint_detail",
    "clip",
    "crashed_threads",
    "dag_data",
    "dag_layout",
    "debug_task",
    "delete_thread",
    "diff",
    "diff_data",
    "diff_frame",
    "diff_values",
    "export_html",
    "export_jsonl",
    "failure_classes",
    "find_graph",
    "findings",
    "health",
    "history_frame",
    "html_data",
    "prune",
    "read_thread",
    "recorded_calls",
    "replay_check",
    "replaying",
    "storage_stats",
    "subgraph_namespaces",
    "sweep",
    "to_jsonable",
    "topology",
    "topology_data",
    "topology_svg",
    "writes_frame",
]
