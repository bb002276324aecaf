"""The `hudi-ops` command: look at a table without a JVM, read its rows with hudi-rs, see or hold its lock.

    hudi-ops timeline|commits PATH [--archived] [--json]
    hudi-ops compactions|clusterings PATH [--archived] [--json]
    hudi-ops file-groups|cleans|plans|savepoints PATH [--json]
    hudi-ops desc PATH [--props FILE] [--hoodie-conf K=V ...] [--json]
    hudi-ops cleans PATH --next [--hoodie-conf hoodie.cleaner.policy=...] [--json]
    hudi-ops read PATH [--as-of T] [--incremental --begin T [--end T]] [--read-optimized] ...
    hudi-ops check duplicates PATH [--props FILE] [--hoodie-conf hoodie.index.type=...] [--json]
    hudi-ops lock show|hold --zookeeper HOST:PORT --lock-key TABLE [--base-path /hudi/locks] ...
    hudi-ops --version

Writes and table services are Apache Hudi's, run by the Spark jobs (`python -m hudi_ops.spark`).
Exit codes: 0 ok, 2 bad input or usage (a path that holds no table), 4 lock not acquired in time, 6 `check
duplicates` found keys held more than once (for a scheduler to alert on; the Spark job `dedupe` repairs them), 1
anything else (storage that refused a read, a damaged table); an error is one line on standard error. A reader that
closes the pipe early (`hudi-ops commits PATH | head -1`) ends the command quietly with 141 (128 + SIGPIPE,
what the shell reports for any program a closed pipe stopped, so `set -o pipefail` sees the output was cut);
^C ends it with 130. An unexpected error (a bug) is one line too; HUDI_OPS_DEBUG=1 lets its traceback through.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import os
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any, TextIO

from hudi_ops.errors import EXIT_DUPLICATES, EXIT_OK, HudiOpsError, InvalidInputError, StorageError, exit_code
from hudi_ops.format.archived_timeline import ArchivedInstant
from hudi_ops.format.instant import Instant, State
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.timeline import Timeline
from hudi_ops.options.keys import (
    ZK_BASE_PATH,
    ZK_LOCK_KEY,
    ZK_URL,
    DataSourceReadConfig,
    IndexConfig,
    WriteConfig,
)
from hudi_ops.options.occ import DEFAULT_LOCK_BASE_PATH
from hudi_ops.options.properties_file import command_line_options, parse_key_values
from hudi_ops.read.clean_planner import next_clean
from hudi_ops.read.duplicate_keys import duplicate_keys
from hudi_ops.read.pending_plans import every_pending_plan
from hudi_ops.read.savepoints import savepointed, savepoints
from hudi_ops.read.service_history import cleans
from hudi_ops.read.service_runs import service_runs
from hudi_ops.read.table_description import TableDescription
from hudi_ops.read.table_overview import archived_commit_stats, commit_stats, file_group_summaries
from hudi_ops.read.table_services import CLUSTERING, COMPACTION

FILTER_OPS = ("not in", "in", "<=", ">=", "!=", "=", "<", ">")
EXIT_CLOSED_PIPE = 128 + signal.SIGPIPE
EXIT_INTERRUPTED = 128 + signal.SIGINT
DEBUG_ENV = "HUDI_OPS_DEBUG"


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        code = args.run(args) or EXIT_OK
        sys.stdout.flush()  # a reader that closed the pipe shows here, not in the interpreter's exit
        return code
    except BrokenPipeError:
        # Python's advice (the signal module's note on SIGPIPE): the rest goes to /dev/null, so the
        # interpreter's own flush at exit does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_CLOSED_PIPE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except HudiOpsError as e:
        return _fail(e)
    except OSError as e:  # the storage refused a listing (a permission, an object store's error)
        return _fail(StorageError(f"cannot read the table's storage: {e}"))
    except Exception as e:  # a table this reader cannot parse: still one line, not a traceback
        if os.environ.get(DEBUG_ENV):  # a bug's traceback, for its report
            raise
        return _fail(HudiOpsError(f"unexpected {type(e).__name__}: {e} (set {DEBUG_ENV}=1 for its traceback)"))


def _fail(error: HudiOpsError) -> int:
    print(f"hudi-ops: error: {error}", file=sys.stderr)
    return exit_code(error)


def _version() -> str:
    try:
        return importlib.metadata.version("hudi-ops")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree that pip never installed
        return "unknown (not installed)"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hudi-ops", description="Look at Apache Hudi tables without a JVM.")
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("read", help="read the table's rows with hudi-rs (snapshot, as of an instant, incremental)")
    r.add_argument("path")
    r.add_argument("--as-of", help="instant time (yyyyMMddHHmmssSSS), epoch or ISO-8601 time")
    r.add_argument("--incremental", action="store_true")
    r.add_argument("--begin", help="incremental start (exclusive), a completion time")
    r.add_argument("--end", help="incremental end (inclusive)")
    r.add_argument("--read-optimized", action="store_true", help="MERGE_ON_READ: base files only")
    r.add_argument("--columns", help="comma-separated columns to return")
    r.add_argument("--filter", action="append", default=[], metavar="'COL OP VALUE'",
                   help="e.g. --filter 'city = sf' (ops: = != < <= > >= in 'not in')")
    r.add_argument("--format", default="jsonl", choices=["jsonl", "parquet"])
    r.add_argument("--output", help="file to write (default: standard output, jsonl only)")
    r.set_defaults(run=_read)

    for name, fn, text in (
        ("timeline", _timeline, "list the instants of the active timeline"),
        ("commits", _commits, "list completed commits with their statistics"),
        ("file-groups", _file_groups, "list file groups and their latest slice"),
        ("cleans", _cleans, "list completed cleans: policy, files and bytes removed"),
        ("plans", _plans, "list pending compaction and clustering plans with their file groups"),
        ("compactions", _compactions, "list completed compactions with their statistics, then pending ones"),
        ("clusterings", _clusterings, "list completed clusterings with their statistics, then pending ones"),
        ("savepoints", _savepoints, "list savepoints"),
        ("desc", _desc, "describe the table: its properties, latest schema, index type and lock provider"),
    ):
        s = sub.add_parser(name, help=text)
        s.add_argument("path")
        s.add_argument("--json", action="store_true")
        s.set_defaults(run=fn)
        if name in ("timeline", "commits", "compactions", "clusterings"):
            s.add_argument("--archived", action="store_true",
                           help="with the archived timeline's instants (table versions 8 and 9), marked archived")
        if name == "cleans":
            s.add_argument("--next", action="store_true",
                           help="list the file slices the next clean would remove, by the policy in --hoodie-conf")
            s.add_argument("--props", help="a properties file of hoodie.cleaner.* options")
            s.add_argument("--hoodie-conf", action="append", default=[], metavar="K=V")
        if name == "desc":
            s.add_argument("--props", help="a properties file of the writers' hoodie.* options (lock, index)")
            s.add_argument("--hoodie-conf", action="append", default=[], metavar="K=V")

    check = sub.add_parser("check", help="check a table's records")
    checks = check.add_subparsers(dest="check", required=True)
    d = checks.add_parser("duplicates", help=f"keys held more than once, by hudi-rs (exit {EXIT_DUPLICATES} when "
                                             "any: the Spark job `dedupe` repairs them)")
    d.add_argument("path")
    d.add_argument("--props", help="a properties file of the writers' hoodie.* options (the index type)")
    d.add_argument("--hoodie-conf", action="append", default=[], metavar="K=V")
    d.add_argument("--json", action="store_true")
    d.set_defaults(run=_check_duplicates)

    lock = sub.add_parser("lock", help="a table's ZooKeeper lock: who holds it, or hold it")
    verbs = lock.add_subparsers(dest="verb", required=True)
    for verb, fn, text in (("show", _lock_show, "who holds the lock and how many wait"),
                           ("hold", _lock_hold, "hold the lock (Hudi's writers wait) until --seconds pass or ^C")):
        v = verbs.add_parser(verb, help=text)
        v.add_argument("--zookeeper", help="host:port[,host:port...] (hoodie.write.lock.zookeeper.url)")
        v.add_argument("--base-path", help="the locks' parent znode (hoodie.write.lock.zookeeper.base_path)")
        v.add_argument("--lock-key", help="the lock's znode name, by default the table's name")
        v.add_argument("--props", help="a properties file of hoodie.* options")
        v.add_argument("--hoodie-conf", action="append", default=[], metavar="K=V")
        if verb == "hold":
            v.add_argument("--seconds", type=float, help="release after this long (default: until interrupted)")
        v.set_defaults(run=fn)
    return p


# -- rows, through hudi-rs ------------------------------------------------------------------------

def _read(args: argparse.Namespace) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from hudi import HudiQueryType, HudiReadOptions, HudiTable

    if args.format == "parquet" and not args.output:
        raise InvalidInputError("--format parquet needs --output FILE")
    meta = MetaClient.open(args.path)  # a missing or unreadable table is named as such, not by hudi-rs' text
    if args.as_of:
        _check_retained(meta, args.as_of)
    options = HudiReadOptions(
        filters=[_parse_filter(f) for f in args.filter],
        projection=[c for c in args.columns.split(",") if c] if args.columns else None,
        hudi_options={DataSourceReadConfig.USE_READ_OPTIMIZED_MODE.name: "true"} if args.read_optimized else {},
    )
    if args.incremental:
        if not args.begin:
            raise InvalidInputError("--incremental needs --begin (a completion time; see `hudi-ops timeline`)")
        options = options.with_query_type(HudiQueryType.Incremental).with_start_timestamp(args.begin)
        if args.end:
            options = options.with_end_timestamp(args.end)
    elif args.as_of:
        options = options.with_as_of_timestamp(args.as_of)
    try:
        batches = HudiTable(args.path).read(options)
    except Exception as e:  # hudi-rs raises plain exceptions with its own text
        raise InvalidInputError(f"hudi-rs cannot read {args.path} so: {e}") from None
    data = pa.Table.from_batches(batches) if batches else pa.table({})
    try:
        if args.format == "parquet":
            pq.write_table(data, args.output)
        elif args.output:
            with open(args.output, "w") as out:
                _write_jsonl(data, out)
        else:
            _write_jsonl(data, sys.stdout)
    except OSError as e:
        raise InvalidInputError(f"cannot write --output {args.output!r}: {e.strerror or e}") from None
    return EXIT_OK


def _check_retained(meta: MetaClient, as_of: str) -> None:
    """hudi-rs reads what is left of a time the cleaner has passed and says nothing: refuse such a time."""
    done = cleans(meta, latest=1)
    retained = done[-1].earliest_commit_to_retain if done else ""
    if as_of.isdigit() and len(as_of) in (14, 17) and as_of < retained and as_of not in savepointed(meta):
        raise InvalidInputError(f"--as-of {as_of} is before {retained}, the earliest commit the last clean "
                                f"({done[-1].instant}) kept readable: its files may be gone; read as of {retained} "
                                "or later, or a savepoint")


def _parse_filter(text: str) -> tuple[str, str, str]:
    parts = text.split(None, 1)
    if len(parts) == 2:
        rest = parts[1]
        for op in FILTER_OPS:
            if rest.lower().startswith(op):
                value = rest[len(op):].strip()
                return parts[0], op.upper(), value
    raise InvalidInputError(f"--filter {text!r} must be 'COLUMN OP VALUE', e.g. 'city = sf'")


def _write_jsonl(data: Any, out: TextIO) -> None:
    for row in data.to_pylist():
        out.write(json.dumps(row, default=str) + "\n")


# -- the timeline ---------------------------------------------------------------------------------

def _archived(meta: MetaClient, timeline: Timeline) -> list[ArchivedInstant]:
    """The archived timeline's instants that are not also on `timeline` (Hudi's archiver writes an instant to
    the history before it deletes its files). Layout 1's archive, log files this reader does not read, is
    refused rather than left out."""
    archive = meta.properties.archive_path
    if archive is not None:
        if meta.storage.list_files(archive):
            raise InvalidInputError(
                f"--archived: table version {meta.properties.table_version} keeps its archived timeline in "
                f"{archive} (log files), which hudi-ops does not read; leave out --archived for the active "
                "timeline, or use Hudi's CLI")
        return []
    return [a for a in meta.archived_timeline() if timeline.completed_instant(a.requested_time) is None]


def _timeline(args: argparse.Namespace) -> int:
    meta = MetaClient.open(args.path)
    timeline = meta.timeline()
    instants = [(i, False) for i in timeline]
    if args.archived:
        instants += [(Instant(a.requested_time, a.action, State.COMPLETED, a.completion_time), True)
                     for a in _archived(meta, timeline)]
    rows = [
        {"requested": i.requested_time, "action": i.action, "state": i.state.name, "completed": i.completion_time,
         "file": None if archived else i.file_name, **({"archived": archived} if args.archived else {})}
        for i, archived in sorted(instants, key=lambda e: e[0].sort_key)
    ]
    _table_out(rows, args.json, ["requested", "action", "state", "completed", "file", *_archived_column(args)])
    return EXIT_OK


def _commits(args: argparse.Namespace) -> int:
    meta = MetaClient.open(args.path)
    timeline = meta.timeline()
    rows = [asdict(c) for c in commit_stats(timeline)]
    if args.archived:
        rows = sorted([{**asdict(c), "archived": True} for c in archived_commit_stats(_archived(meta, timeline))]
                      + [{**r, "archived": False} for r in rows], key=lambda r: r["completed"])
    _table_out(rows, args.json, ["instant", "completed", "action", "operation", "files", "writes", "inserts",
                                 "updates", "deletes", "bytes", *_archived_column(args)])
    return EXIT_OK


def _archived_column(args: argparse.Namespace) -> list[str]:
    return ["archived"] if args.archived else []


def _compactions(args: argparse.Namespace) -> int:
    return _service_runs(args, COMPACTION.name)


def _clusterings(args: argparse.Namespace) -> int:
    return _service_runs(args, CLUSTERING.name)


def _service_runs(args: argparse.Namespace, service: str) -> int:
    meta = MetaClient.open(args.path)
    timeline = meta.timeline()
    archived = _archived(meta, timeline) if args.archived else []
    rows = [r.to_dict() for r in service_runs(timeline, service, archived)]
    _table_out(rows, args.json, ["instant", "status", "state", "completed", "file_groups", "files", "writes",
                                 "bytes", *_archived_column(args)])
    return EXIT_OK


def _desc(args: argparse.Namespace) -> int:
    options = command_line_options(args.props, parse_key_values(args.hoodie_conf))
    described = TableDescription.load(MetaClient.open(args.path), options)
    if args.json:
        print(json.dumps(described.to_dict(), indent=1))
        return EXIT_OK
    settings = {k: v for k, v in described.to_dict().items() if k != "columns"}
    width = max(map(len, settings))
    for key, value in settings.items():
        shown = ",".join(value) if isinstance(value, tuple) else value
        print(f"{key.ljust(width)}  {shown if shown not in (None, '') else '-'}")
    print()
    _table_out([{"column": name, "type": kind} for name, kind in described.columns], False, ["column", "type"])
    return EXIT_OK


def _file_groups(args: argparse.Namespace) -> int:
    meta = MetaClient.open(args.path)
    rows = [asdict(g) for g in file_group_summaries(meta, meta.timeline())]
    _table_out(rows, args.json, ["partition", "file_id", "slices", "base_instant", "log_files", "bytes"])
    return EXIT_OK


def _cleans(args: argparse.Namespace) -> int:
    if not args.next and (args.props or args.hoodie_conf):
        raise InvalidInputError("--props and --hoodie-conf set the policy of the next clean: add --next")
    meta = MetaClient.open(args.path)
    if args.next:
        plan = next_clean(meta, command_line_options(args.props, parse_key_values(args.hoodie_conf)))
        if args.json:
            print(json.dumps(plan.to_dict(), indent=2))
            return EXIT_OK
        print(f"{plan.policy}: earliest commit to retain {plan.earliest_commit_to_retain or '-'}; "
              f"the next clean removes {len(plan.slices)} slice(s), {len(plan.files)} file(s), {plan.bytes} bytes")
        rows = [{k: v for k, v in s.to_dict().items() if k != "files"} for s in plan.slices]
        _table_out(rows, False, ["partition", "file_id", "base_instant", "bytes", "why"])
        return EXIT_OK
    rows = [c.to_dict() for c in cleans(meta)]
    _table_out(rows, args.json, ["instant", "completed", "policy", "files", "bytes", "earliest_commit_to_retain"])
    return EXIT_OK


def _plans(args: argparse.Namespace) -> int:
    timeline = MetaClient.open(args.path).timeline()
    rows = [p.to_dict() for p in every_pending_plan(timeline)]
    if not args.json:
        rows = [{**r, "file_groups": len(r["file_groups"])} for r in rows]  # type: ignore[arg-type]
    _table_out(rows, args.json, ["service", "instant", "state", "file_groups"])
    return EXIT_OK


def _savepoints(args: argparse.Namespace) -> int:
    rows = [s.to_dict() for s in savepoints(MetaClient.open(args.path))]
    _table_out(rows, args.json, ["instant", "by", "comments", "files"])
    return EXIT_OK


# -- checks ---------------------------------------------------------------------------------------

def _check_duplicates(args: argparse.Namespace) -> int:
    options = command_line_options(args.props, parse_key_values(args.hoodie_conf))
    found = duplicate_keys(MetaClient.open(args.path), options)
    code = EXIT_DUPLICATES if found.found else EXIT_OK
    if args.json:
        print(json.dumps(found.to_dict(), indent=1))
        return code
    print(f"{found.records} record(s) read; {len(found.within_partitions)} key(s) held more than once within a "
          "partition")
    if found.within_partitions:
        _table_out([{"key": d.key, "partition": d.partition, "records": d.records, "files": ",".join(d.files)}
                    for d in found.within_partitions], False, ["key", "partition", "records", "files"])
    index = f"index {found.index_type}" if found.index_type else "Hudi's default index (hoodie.index.type not given)"
    matters = "a duplicate under it" if found.global_index else "two records, unless the index is global"
    print(f"{len(found.across_partitions)} key(s) in more than one partition: with {index}, {matters}")
    if found.across_partitions:
        _table_out([{"key": k.key, "partitions": ",".join(f"{p}:{n}" for p, n in k.partitions.items()),
                     "files": ",".join(k.files)} for k in found.across_partitions], False,
                   ["key", "partitions", "files"])
    if found.found:
        where = f"across partitions (give it --hoodie-conf {IndexConfig.TYPE.name}={found.index_type})" \
            if found.global_index and found.across_partitions else "within its partition"
        print(f"repair: python -m hudi_ops.spark dedupe --target-base-path PATH [--dry-run] keeps each key's latest "
              f"version {where}")
    return code


# -- the lock -------------------------------------------------------------------------------------

def _lock_options(args: argparse.Namespace) -> dict[str, str]:
    options = command_line_options(args.props, parse_key_values(args.hoodie_conf))
    for flag, key in (("zookeeper", ZK_URL), ("base_path", ZK_BASE_PATH), ("lock_key", ZK_LOCK_KEY)):
        if getattr(args, flag):
            options[key.name] = getattr(args, flag)
    options.setdefault(ZK_BASE_PATH.name, DEFAULT_LOCK_BASE_PATH)
    if not options.get(ZK_URL.name):
        raise InvalidInputError(f"no ZooKeeper given: pass --zookeeper host:port (or {ZK_URL.name})")
    if not options.get(ZK_LOCK_KEY.name) and not options.get(WriteConfig.TABLE_NAME.name):
        raise InvalidInputError("no lock named: pass --lock-key (the table's name, unless its writers set another)")
    return options


def _lock_show(args: argparse.Namespace) -> int:
    from hudi_ops.locks.lock_state import lock_state

    options = _lock_options(args)
    state = lock_state(options, options.get(WriteConfig.TABLE_NAME.name, ""))
    print(state.describe())
    return EXIT_OK if state.error is None else 1


def _lock_hold(args: argparse.Namespace) -> int:
    from hudi_ops.locks.held_lock import HeldLock

    options = _lock_options(args)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with HeldLock(options, options.get(WriteConfig.TABLE_NAME.name, "")) as held:
        print(f"holding {held.provider.url}{held.provider.lock_path}: Hudi's writers of the table wait", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait(args.seconds)
        held.provider.assert_held()  # say so if the lock was lost meanwhile (ZooKeeper session expired)
    print("released", flush=True)
    return EXIT_OK


def _table_out(rows: list[dict[str, Any]], as_json: bool, cols: list[str]) -> None:
    if as_json:
        print(json.dumps(rows, default=str, indent=1))
        return
    widths = {c: max([len(c), *(len(str(r.get(c))) for r in rows)]) for c in cols}
    print("  ".join(c.ljust(widths[c]) for c in cols))
    for r in rows:
        print("  ".join(str(r.get(c)).ljust(widths[c]) for c in cols))


if __name__ == "__main__":
    sys.exit(main())
