"""Run LangGraph's own test suite on durable_debug and compare it with expectations.txt.

    python tests/langgraph_suite/run.py [--update] [--reference] [-k EXPR] [TEST_ID ...]

(``scripts/langgraph-suite.sh`` runs it with the virtualenv's Python.) Test ids may name a
file, a class or a function (all its parameters). Steps: take the
``langgraph`` sdist pinned in requirements/dev.lock from the cache (downloading it with
``pip download`` the first time), unpack its ``tests/`` into the cache with every module-level
statement guarded (:mod:`langgraph_suite.guard`), start a PostgreSQL server the way
tests/servers.py does (required under ``CI=1``), run pytest there with
:mod:`langgraph_suite.plugin` instead of LangGraph's conftest, run the tests whose outcome was
unexpected once more (timing), then print passed / expected failures by reason / unexpected
and exit 1 on any unexpected failure or pass.

A test gets ``--timeout`` seconds (:data:`DEFAULT_TIMEOUT`): one that outlives it fails with
its threads' stacks printed, and one that cannot be stopped ends its pytest process, is
recorded as failed, named, and pytest runs again on the tests left (see ``plugin.py``).
``--tests DIR`` runs DIR's test files instead of LangGraph's (the runner's own tests).

``durable_debug`` is imported from wherever the environment finds it (``PYTHONPATH`` first),
so the suite can be pointed at any source tree.

``--update`` rewrites expectations.txt: tests that now pass leave it, new failures are added
(``missing:``/``private:`` when the failure names the API, else ``todo: <error>``), reasons
already given stay. ``--reference`` runs the same selection on the installed LangGraph instead;
with ``--update`` it rewrites the ``fails on langgraph`` entries (tests that do not pass there
are not run on durable_debug).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))  # langgraph_suite, servers

from langgraph_suite import expectations as ex  # noqa: E402
from langgraph_suite.guard import guard_source  # noqa: E402

DEFAULT_TIMEOUT = 300.0
"""Seconds a test gets by default (``--timeout``): generous, as CI runs the suite on a loaded
machine; a test that outlives it fails, named, with its threads' stacks."""

CACHE = Path(os.environ.get("LANGGRAPH_SUITE_CACHE", REPO / ".cache" / "langgraph-suite"))
LOCK = REPO / "requirements" / "dev.lock"


def pinned_version() -> str:
    """The ``langgraph`` version requirements/dev.lock pins."""
    match = re.search(r"^langgraph==(\S+)$", LOCK.read_text(), flags=re.M)
    if not match:
        raise SystemExit(f"{LOCK}: no 'langgraph==<version>' line")
    return match.group(1)


def sdist(version: str) -> Path:
    """The cached sdist of ``langgraph==version``, downloaded from PyPI the first time."""
    dist = CACHE / "dist"
    path = dist / f"langgraph-{version}.tar.gz"
    if not path.exists():
        dist.mkdir(parents=True, exist_ok=True)
        print(f"langgraph-suite: downloading the langgraph {version} sdist", flush=True)
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary",
             ":all:", f"langgraph=={version}", "-d", str(dist)],
            check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(
                f"langgraph-suite: pip download of the langgraph {version} sdist failed "
                f"(exit {done.returncode}); it needs PyPI once, then {dist} holds it"
            )
        if not path.exists():
            raise SystemExit(f"pip download did not write {path}")
    return path


def unpack(version: str) -> Path:
    """A fresh copy of the sdist's tests/ (module-level statements guarded) to run, in a
    directory of this run's own (several runs may share the cache)."""
    archive = sdist(version)
    root = Path(tempfile.mkdtemp(prefix=f"run-{version}-", dir=CACHE))
    (root / "tests").mkdir(parents=True)
    prefix = f"langgraph-{version}/tests/"
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if not member.name.startswith(prefix) or not member.isfile():
                continue
            rel = member.name[len(prefix) :]
            out = root / "tests" / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            data = tar.extractfile(member)
            assert data is not None
            content = data.read()
            name = Path(rel).name
            if "/" not in rel and name.startswith("test_") and name.endswith(".py"):
                content = guard_source(content.decode("utf-8"), rel).encode("utf-8")
            out.write_bytes(content)
    (root / "pytest.ini").write_text("[pytest]\n")  # keeps our pyproject's options away
    return root


def copy_tests(source: Path) -> Path:
    """A run directory whose tests/ is a copy of ``source`` (``--tests``: the runner tested on
    test files of its own instead of LangGraph's)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="run-own-", dir=CACHE))
    shutil.copytree(source, root / "tests")
    (root / "pytest.ini").write_text("[pytest]\n")
    return root


@contextmanager
def postgres(wanted: bool) -> Iterator[str | None]:
    """A PostgreSQL URL for the run, or None when it cannot start outside CI."""
    if not wanted:
        yield None
        return
    from servers import ServerUnavailable, postgres_server, services_required

    external = os.environ.get("DURABLE_DEBUG_TEST_POSTGRES_URL")
    if external:
        yield external
        return
    with ExitStack() as stack:
        try:
            url = stack.enter_context(postgres_server())
        except ServerUnavailable as exc:
            if services_required():
                raise SystemExit(
                    f"langgraph-suite: the PostgreSQL test server could not be started: {exc}"
                    "\n(required: CI or DURABLE_DEBUG_REQUIRE_SERVICES is set)"
                ) from exc
            print(f"langgraph-suite: running without PostgreSQL ({exc})", flush=True)
            url = None
        yield url


def run_pytest(
    root: Path,
    *,
    target: str,
    pg_url: str | None,
    deselect: set[str],
    only: set[str] | None,
    extra: list[str],
    timeout: float,
    label: str,
) -> dict[str, dict[str, Any]]:
    """Run the suite's pytest; return each test's outcome by id.

    A test that outlives its timeout and does not stop ends the pytest process (see the
    plugin): it is then recorded as failed, named, with its threads' stacks, and pytest runs
    again on the tests not run yet (at most :data:`MAX_HARD_STOPS` times).
    """
    done: dict[str, dict[str, Any]] = {}
    stacks = root / f"stacks-{label}.txt"
    shown = 0  # how much of the stacks file was printed

    def show_timeouts(end: int | None = None) -> None:
        """Print the stacks of the tests that timed out (and stopped) since the last time."""
        nonlocal shown
        text = _read_from(stacks, shown, end)
        shown = end if end is not None else (stacks.stat().st_size if stacks.exists() else 0)
        if text.strip():
            print(f"langgraph-suite: tests that timed out, and their stacks ({stacks}):")
            print(_without_runner_frames(text), flush=True)

    for _ in range(MAX_HARD_STOPS + 1):
        results = _pytest_once(
            root, target=target, pg_url=pg_url, deselect=deselect | set(done), only=only,
            extra=extra, timeout=timeout, label=label, stacks=stacks,
        )  # fmt: skip
        if results is not None:
            show_timeouts()
            return {**done, **results}
        done.update(_progress(root, label))
        test_id, offset = _hard_stopped(root, label)
        if test_id is None or test_id in done:
            raise SystemExit(f"langgraph-suite: pytest wrote no results (see its log in {root})")
        show_timeouts(offset)
        dump = _read_from(stacks, offset).rstrip()
        shown = stacks.stat().st_size
        print(
            f"langgraph-suite: {test_id} outlived its {timeout:g} s and did not stop: pytest "
            f"was ended; its threads' stacks:\n{_without_runner_frames(dump)}",
            flush=True,
        )
        done[test_id] = {
            "outcome": "failed",
            "summary": f"SuiteTimeout: ran longer than {timeout:g} s and did not stop",
            "detail": dump[:3000],
            "hint": "timeout",
            "when": "call",
        }
    raise SystemExit(f"langgraph-suite: {MAX_HARD_STOPS + 1} tests did not stop; giving up")


_PYTEST_COUNTS = re.compile(r"\b\d+ (passed|failed|skipped|deselected|errors?)\b.* in \d")
"""pytest's last line (``3 failed, 98 passed in 51.11s``)."""

MAX_HARD_STOPS = 5
"""How many tests may end the pytest process by hanging before the run gives up."""


def _progress(root: Path, label: str) -> dict[str, dict[str, Any]]:
    """The outcomes the plugin appended, test by test, before the process ended."""
    path = root / f"progress-{label}.jsonl"
    out: dict[str, dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.update(json.loads(line))
    return out


def _hard_stopped(root: Path, label: str) -> tuple[str | None, int]:
    """The test running when the process ended, and where its stacks start in the stacks
    file (the plugin writes both to the running file)."""
    path = root / f"running-{label}.txt"
    if not path.exists():
        return None, 0
    offset, _, test_id = path.read_text(encoding="utf-8").partition("\t")
    return test_id or None, int(offset)


_RUNNER_FRAMES = re.compile(r'File "(<frozen runpy>|.*/(_pytest|pluggy|langgraph_suite)/)')
"""Stack frames of pytest, pluggy, runpy and this runner: left out when stacks are printed
(the stacks file keeps them)."""


def _without_runner_frames(text: str) -> str:
    """A stack dump without the frames of the machinery running the tests."""
    return "\n".join(line for line in text.rstrip().splitlines() if not _RUNNER_FRAMES.search(line))


def _read_from(path: Path, start: int, end: int | None = None) -> str:
    """The text of ``path`` from byte ``start`` to ``end`` (its end); "" when it is absent."""
    if not path.exists():
        return ""
    with path.open("rb") as f:
        f.seek(start)
        data = f.read() if end is None else f.read(max(0, end - start))
    return data.decode("utf-8", errors="replace")


def _pytest_once(
    root: Path,
    *,
    target: str,
    pg_url: str | None,
    deselect: set[str],
    only: set[str] | None,
    extra: list[str],
    timeout: float,
    label: str,
    stacks: Path,
) -> dict[str, dict[str, Any]] | None:
    """Run the suite's pytest once; each test's outcome by id, or None when the process
    ended without writing them."""
    results = root / f"results-{label}.json"
    env = dict(os.environ)
    env.update(
        LANGGRAPH_SUITE_TARGET=target,
        LANGGRAPH_SUITE_RESULTS=str(results),
        LANGGRAPH_SUITE_TIMEOUT=str(timeout),
        LANGGRAPH_SUITE_STACKS=str(stacks),
        LANGGRAPH_SUITE_RUNNING=str(root / f"running-{label}.txt"),
        LANGGRAPH_SUITE_PROGRESS=str(root / f"progress-{label}.jsonl"),
        LANGGRAPH_SUITE_POSTGRES_URL=pg_url or "",
        PYTHONPATH=os.pathsep.join(
            p for p in (str(root), str(HERE.parent), os.environ.get("PYTHONPATH", "")) if p
        ),
    )
    for name, ids in (("DESELECT", deselect), ("ONLY", only)):
        if ids is None:
            env.pop(f"LANGGRAPH_SUITE_{name}", None)
            continue
        path = root / f"{name.lower()}-{label}.txt"
        path.write_text("".join(f"{i}\n" for i in sorted(ids)))
        env[f"LANGGRAPH_SUITE_{name}"] = str(path)
    results.unlink(missing_ok=True)
    (root / f"progress-{label}.jsonl").unlink(missing_ok=True)
    (root / f"running-{label}.txt").unlink(missing_ok=True)
    command = [
        sys.executable, "-m", "pytest", "-c", str(root / "pytest.ini"), "--rootdir", str(root),
        "-p", "langgraph_suite.plugin", "-p", "no:asyncio", "-p", "no:cacheprovider",
        "--noconftest", "--continue-on-collection-errors", "--snapshot-warn-unused",
        "-q", "--no-header", "-rN", "--tb=no", "-p", "no:warnings",
        "-p", "no:hypothesispytest", *extra, "tests",
    ]  # fmt: skip
    # no:hypothesispytest: LangGraph's tests do not use it, and its terminal summary imports
    # hypothesis, whose parse fails at the end of a long run on CPython 3.11 (SystemError).
    # --tb=no: the failures are summed up from the results; formatting 2,000 tracebacks would
    # cost minutes (and CPython 3.11's ast.parse fails on some deep ones).
    log = root / f"pytest-{label}.log"
    print(f"langgraph-suite: {label} run on {target} (pytest's output: {log})", flush=True)
    with log.open("a") as out:
        subprocess.run(command, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
    lines = log.read_text(errors="replace").strip().splitlines()
    counts = [line for line in lines if _PYTEST_COUNTS.search(line)]  # not what exit printed
    print(f"  {(counts or lines or ['(pytest printed nothing)'])[-1]}", flush=True)
    if not results.exists():
        return None
    data: dict[str, dict[str, Any]] = json.loads(results.read_text())["tests"]
    return data


def compare(
    results: dict[str, dict[str, Any]], entries: dict[str, ex.Entry]
) -> dict[str, list[str]]:
    """Sort the outcomes: passed, expected (failures listed), unexpected failures and
    passes, skipped, flaky."""
    out: dict[str, list[str]] = {
        k: [] for k in ("passed", "expected", "unexpected_fail", "unexpected_pass", "skipped")
    }
    for test_id, result in sorted(results.items()):
        outcome = result.get("outcome")
        entry = ex.covering(test_id, entries)
        flaky = entry is not None and ex.kind(entry.reason) == "flaky"
        if outcome == "skipped":
            out["skipped"].append(test_id)
        elif outcome == "passed":
            bad = entry is not None and not flaky
            out["unexpected_pass" if bad else "passed"].append(test_id)
        elif outcome == "failed":
            out["expected" if entry is not None else "unexpected_fail"].append(test_id)
    return out


def new_reason(result: dict[str, Any]) -> str:
    """The reason --update gives a new failure."""
    hint = result.get("hint")
    if hint and hint.split(":", 1)[0] in ("missing", "private"):
        return str(hint)
    summary = " ".join(str(result.get("summary", "")).split())[:160]
    return f"todo: {summary}" if summary else "todo: (no message)"


def summarize(
    sorted_: dict[str, list[str]],
    results: dict[str, dict[str, Any]],
    entries: dict[str, ex.Entry],
    deselected: int,
    seconds: float,
) -> None:
    """Print what passed, what failed as expected (by reason) and what was unexpected."""
    reasons: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    for test_id in sorted_["expected"]:
        entry = ex.covering(test_id, entries)
        assert entry is not None
        reasons[entry.reason] += 1
        kinds[ex.kind(entry.reason)] += 1
    print()
    print(f"langgraph-suite: {len(results)} tests ran in {seconds:.0f} s")
    print(f"  passed: {len(sorted_['passed'])}")
    print(f"  skipped: {len(sorted_['skipped'])}")
    print(f"  not run (fails on langgraph): {deselected}")
    print(f"  expected failures: {len(sorted_['expected'])}")
    for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]):
        print(f"    {k}: {n}")
    for reason, n in reasons.most_common():
        print(f"      {n:5d}  {reason}")
    missing = kinds["missing"]
    private = kinds["private"]
    passed = len(sorted_["passed"]) + len(sorted_["unexpected_pass"])  # both passed
    need_ours = len(results) - len(sorted_["skipped"]) - private - missing
    if need_ours > 0:
        share = 100 * passed / need_ours
        total = need_ours + missing
        print(
            f"  share: {passed} of {need_ours} tests that need only APIs we have pass "
            f"({share:.0f} %); {passed} of {total} counting tests that need a public "
            f"LangGraph API we lack ({100 * passed / total:.0f} %); {private} use "
            "private LangGraph modules"
        )
    for label, key in (("unexpected failures", "unexpected_fail"),
                       ("unexpected passes", "unexpected_pass")):  # fmt: skip
        ids = sorted_[key]
        print(f"  {label}: {len(ids)}")
        for test_id in ids:
            detail = results[test_id].get("summary", "") if key == "unexpected_fail" else ""
            print(f"    {test_id}  {detail}"[:220])


def main(argv: list[str] | None = None) -> int:
    """Run the suite; the exit status is 1 on an unexpected failure or pass."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="rewrite expectations.txt")
    parser.add_argument("--reference", action="store_true", help="run on the real LangGraph")
    parser.add_argument("--no-postgres", action="store_true", help="no PostgreSQL params")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds per test (default: {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--expectations",
        type=Path,
        default=ex.EXPECTATIONS,
        help=f"the expectations file to compare with and --update (default: {ex.EXPECTATIONS})",
    )
    parser.add_argument("--keep", action="store_true", help="keep the run's directory")
    parser.add_argument(
        "--tests",
        type=Path,
        help="run the test files of this directory instead of LangGraph's (tests the runner)",
    )
    parser.add_argument("-k", dest="keyword", help="pytest -k expression (a partial run)")
    parser.add_argument("ids", nargs="*", help="test ids or files to run (a partial run)")
    args = parser.parse_args(argv)
    absent = [m for m in ("pytest_mock", "syrupy") if importlib.util.find_spec(m) is None]
    if absent:
        raise SystemExit(
            f"langgraph-suite: {', '.join(absent)} not installed; LangGraph's tests import "
            "them (pip install -r requirements/dev.lock)"
        )
    started = time.monotonic()
    root = unpack(pinned_version()) if args.tests is None else copy_tests(args.tests)
    entries = ex.load(args.expectations)
    target = "langgraph" if args.reference else "durable_debug"
    partial = bool(args.keyword or args.ids)
    extra = ["-k", args.keyword] if args.keyword else []
    only = set(args.ids) if args.ids else None
    skip_ids = set() if args.reference else {
        e.test_id for e in entries.values() if ex.kind(e.reason) == ex.FAILS_ON_LANGGRAPH
    }  # fmt: skip
    common: dict[str, Any] = {"target": target, "timeout": args.timeout}
    with postgres(not args.no_postgres) as pg_url:
        results = run_pytest(
            root, pg_url=pg_url, deselect=skip_ids, only=only, extra=extra, label="first",
            **common,
        )  # fmt: skip
        if args.reference:
            status = reference(
                results, entries, update=args.update, partial=partial, path=args.expectations
            )
            if not args.keep:
                shutil.rmtree(root)
            return status
        sorted_ = compare(results, entries)
        again = set(sorted_["unexpected_fail"]) | set(sorted_["unexpected_pass"])
        if again:
            print(f"langgraph-suite: running the {len(again)} unexpected outcomes again")
            second = run_pytest(
                root, pg_url=pg_url, deselect=set(), only=again, extra=[], label="again",
                **common,
            )  # fmt: skip
            for test_id, result in second.items():
                first = results.get(test_id, {})
                if result.get("outcome") != first.get("outcome"):
                    result["flaky"] = True
                    print(f"  {test_id}: {first.get('outcome')} then {result.get('outcome')}")
                    if first.get("outcome") == "failed":
                        result.setdefault("summary", first.get("summary"))
                results[test_id] = result
            sorted_ = compare(results, entries)
    deselected = len(skip_ids)
    summarize(sorted_, results, entries, deselected, time.monotonic() - started)
    unexpected = bool(sorted_["unexpected_fail"] or sorted_["unexpected_pass"])
    if args.keep or (unexpected and not args.update):
        print(f"langgraph-suite: the run's copy, results and pytest logs are in {root}")
    else:
        shutil.rmtree(root)
    if args.update:
        update(
            results,
            entries,
            sorted_,
            partial=partial,
            pg=pg_url is not None,
            path=args.expectations,
        )
        return 0
    return 1 if unexpected else 0


def update(
    results: dict[str, dict[str, Any]],
    entries: dict[str, ex.Entry],
    sorted_: dict[str, list[str]],
    *,
    partial: bool,
    pg: bool,
    path: Path,
) -> None:
    """Rewrite expectations.txt from this run (see the module docstring)."""
    kept: dict[str, ex.Entry] = {}
    passed = set(sorted_["passed"]) | set(sorted_["unexpected_pass"])
    for test_id, entry in entries.items():
        k = ex.kind(entry.reason)
        if k == ex.FAILS_ON_LANGGRAPH or k == "flaky":
            kept[test_id] = entry
        elif "::" not in test_id:
            # A whole file: kept while it still fails to import or any of its tests fails.
            seen = test_id in results or any(i.startswith(test_id + "::") for i in results)
            imports_fail = results.get(test_id, {}).get("outcome") == "failed"
            tests_fail = any(i.startswith(test_id + "::") for i in sorted_["expected"])
            if imports_fail or tests_fail or (partial and not seen):
                kept[test_id] = entry
        elif test_id in results:
            if test_id not in passed and results[test_id].get("outcome") == "failed":
                kept[test_id] = entry
        elif partial or (not pg and "postgres" in test_id):
            kept[test_id] = entry  # not run this time
    for test_id in sorted_["unexpected_fail"]:
        if ex.covering(test_id, kept) is None:
            kept[test_id] = ex.Entry(test_id, new_reason(results[test_id]))
    for test_id, result in results.items():
        # Failed once and passed on the second run: a human decides whether it is flaky.
        if result.get("flaky") and ex.covering(test_id, kept) is None:
            summary = " ".join(str(result.get("summary", "")).split())[:120]
            kept[test_id] = ex.Entry(test_id, f"todo: flaky? failed, then passed: {summary}")
    path.write_text(ex.format_entries(kept.values()), encoding="utf-8")
    todo = sum(1 for e in kept.values() if ex.kind(e.reason) == "todo")
    print(f"langgraph-suite: wrote {path} ({len(kept)} entries, {todo} todo)")


def reference(
    results: dict[str, dict[str, Any]],
    entries: dict[str, ex.Entry],
    *,
    update: bool,
    partial: bool,
    path: Path,
) -> int:
    """Report the run on LangGraph; with ``update``, rewrite the 'fails on langgraph' list."""
    outcomes = Counter(r.get("outcome") for r in results.values())
    print(f"langgraph-suite: on LangGraph: {dict(outcomes)}")
    failing = {i for i, r in results.items() if r.get("outcome") != "passed"}
    snapshot = CACHE / "reference.json"
    snapshot.write_text(json.dumps(results, indent=1, sort_keys=True))
    print(f"langgraph-suite: outcomes on LangGraph written to {snapshot}")
    if not update:
        return 0
    kept = {
        i: e
        for i, e in entries.items()
        if ex.kind(e.reason) != ex.FAILS_ON_LANGGRAPH or (partial and i not in results)
    }
    for test_id in failing:
        detail = "skipped" if results[test_id].get("outcome") == "skipped" else ""
        reason = f"{ex.FAILS_ON_LANGGRAPH}: {detail}" if detail else ex.FAILS_ON_LANGGRAPH
        kept[test_id] = ex.Entry(test_id, reason)
    path.write_text(ex.format_entries(kept.values()), encoding="utf-8")
    print(f"langgraph-suite: wrote {path}: {len(failing)} fail on LangGraph")
    return 0


if __name__ == "__main__":
    sys.exit(main())
