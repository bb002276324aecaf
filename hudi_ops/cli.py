"""The `hudi-ops` command: create, write, read and inspect tables with the local engine (no Spark).

Exit codes: 0 ok, 2 bad input or usage, 3 write conflict, 4 lock timeout, 1 anything else.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

from hudi_ops.config import HoodieConfig, WriteConfig, command_line_options
from hudi_ops.errors import EXIT_OK, HudiOpsError, InvalidInputError, exit_code
from hudi_ops.read.table_overview import commit_stats, file_group_summaries
from hudi_ops.table import HudiTable


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args) or EXIT_OK
    except HudiOpsError as e:
        print(f"hudi-ops: error: {e}", file=sys.stderr)
        return exit_code(e)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hudi-ops", description="Apache Hudi tables, local engine.")
    sub = p.add_subparsers(dest="command", required=True)

    c = sub.add_parser("create", help="create an empty table (table version 8)")
    c.add_argument("path")
    c.add_argument("--name", required=True)
    c.add_argument("--type", default="COPY_ON_WRITE", choices=["COPY_ON_WRITE", "MERGE_ON_READ"])
    c.add_argument("--record-key", required=True, help="field, or comma-separated fields")
    c.add_argument("--partition-field", default="", help="field, or comma-separated fields")
    c.add_argument("--ordering-field", help="precombine field; enables EVENT_TIME_ORDERING")
    c.add_argument("--merge-mode", choices=["EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING"])
    c.add_argument("--hive-style", action="store_true", help="partition folders named field=value")
    c.set_defaults(run=_create)

    w = sub.add_parser("write", help="write a file of records in one commit")
    w.add_argument("path")
    w.add_argument("--operation", choices=["upsert", "insert", "bulk_insert", "delete"],
                   help="default: hoodie.datasource.write.operation, else upsert")
    w.add_argument("--input", required=True, help="a .parquet, .jsonl/.json or .csv file")
    _conf_args(w)
    w.set_defaults(run=_write)

    r = sub.add_parser("read", help="read the table (snapshot, as of an instant, or incremental)")
    r.add_argument("path")
    r.add_argument("--as-of", help="instant (yyyyMMddHHmmssSSS), ISO-8601 time or epoch millis")
    r.add_argument("--incremental", action="store_true")
    r.add_argument("--begin", help="incremental start (exclusive), a completion time")
    r.add_argument("--end", help="incremental end (inclusive)")
    r.add_argument("--read-optimized", action="store_true")
    r.add_argument("--columns", help="comma-separated columns to return")
    r.add_argument("--filter", action="append", default=[], metavar="'COL OP VALUE'",
                   help="e.g. --filter 'city = sf' (ops: = != < <= > >= in 'not in')")
    r.add_argument("--format", default="jsonl", choices=["jsonl", "parquet"])
    r.add_argument("--output", help="file to write (default: standard output, jsonl only)")
    r.set_defaults(run=_read)

    rb = sub.add_parser("rollback-failed", help="roll back pending writes whose heartbeat expired")
    rb.add_argument("path")
    rb.add_argument("--dry-run", action="store_true", help="only list what would be rolled back")
    _conf_args(rb)
    rb.set_defaults(run=_rollback_failed)

    for name, fn, text in (
        ("timeline", _timeline, "list the instants of the active timeline"),
        ("commits", _commits, "list completed commits with their statistics"),
        ("file-groups", _file_groups, "list file groups and their latest slice"),
    ):
        s = sub.add_parser(name, help=text)
        s.add_argument("path")
        s.add_argument("--json", action="store_true")
        s.set_defaults(run=fn)
    return p


def _conf_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--props", help="a properties file of hoodie.* options")
    p.add_argument("--hoodie-conf", action="append", default=[], metavar="K=V")


def _options(args: argparse.Namespace) -> dict[str, str]:
    return command_line_options(args.props, args.hoodie_conf)


def _create(args: argparse.Namespace) -> int:
    table = HudiTable.create(
        args.path,
        name=args.name,
        table_type=args.type,
        record_key=[k for k in args.record_key.split(",") if k],
        partition_fields=[f for f in args.partition_field.split(",") if f],
        ordering_field=args.ordering_field,
        merge_mode=args.merge_mode,
        hive_style=args.hive_style,
    )
    _emit({"created": table.base_path, "table_version": table.properties.table_version})
    return EXIT_OK


def read_input(path: str) -> pa.Table:
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"input {path!r} is not a file (it does not exist, or is a folder)")
    suffix = p.suffix.lower()
    try:
        if suffix == ".parquet":
            return pq.read_table(p)
        if suffix in (".json", ".jsonl", ".ndjson"):
            return pajson.read_json(p)
        if suffix == ".csv":
            return pacsv.read_csv(p)
    except pa.ArrowInvalid as e:
        raise InvalidInputError(f"cannot parse {path!r}: {e}") from None
    raise InvalidInputError(f"input {path!r} must end in .parquet, .json, .jsonl or .csv")


def _write(args: argparse.Namespace) -> int:
    table = HudiTable.open(args.path)
    options = _options(args)
    operation = args.operation or HoodieConfig(options).get(WriteConfig.OPERATION) or "upsert"
    result = table.write(read_input(args.input), operation, options=options)
    _emit(result.to_dict())
    return EXIT_OK


def _parse_filter(text: str) -> tuple[str, str, str]:
    parts = text.split(None, 1)
    if len(parts) == 2:
        rest = parts[1]
        for op in ("not in ", "in ", "<=", ">=", "!=", "==", "=", "<", ">"):
            if rest.lower().startswith(op):
                return parts[0], op.strip(), rest[len(op):].strip()
    raise InvalidInputError(f"--filter {text!r} must be 'COLUMN OP VALUE', e.g. 'city = sf'")


def _read(args: argparse.Namespace) -> int:
    table = HudiTable.open(args.path)
    columns = [c for c in args.columns.split(",") if c] if args.columns else None
    filters = [_parse_filter(f) for f in args.filter]
    if args.incremental:
        if not args.begin:
            raise InvalidInputError("--incremental needs --begin (a completion time; see `hudi-ops timeline`)")
        data = table.incremental(args.begin, args.end, columns=columns, filters=filters)
    else:
        data = table.read(as_of=args.as_of, columns=columns, filters=filters, read_optimized=args.read_optimized)
    if args.format == "parquet" and not args.output:
        raise InvalidInputError("--format parquet needs --output FILE")
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


def _write_jsonl(data: pa.Table, out: TextIO) -> None:
    for row in data.to_pylist():
        out.write(json.dumps(row, default=str) + "\n")


def _rollback_failed(args: argparse.Namespace) -> int:
    table = HudiTable.open(args.path)
    results = table.rollback_failed_writes(dry_run=args.dry_run, options=_options(args))
    _emit({"dry_run": args.dry_run, "rolled_back": [r.to_dict() for r in results]})
    return EXIT_OK


def _timeline(args: argparse.Namespace) -> int:
    tl = HudiTable.open(args.path).timeline()
    rows = [
        {"requested": i.requested_time, "action": i.action, "state": i.state.name,
         "completed": i.completion_time, "file": i.file_name}
        for i in tl
    ]
    _table_out(rows, args.json, ["requested", "action", "state", "completed", "file"])
    return EXIT_OK


def _commits(args: argparse.Namespace) -> int:
    rows = [asdict(c) for c in commit_stats(HudiTable.open(args.path).timeline())]
    _table_out(rows, args.json, ["instant", "completed", "action", "operation", "files", "writes", "inserts",
                                 "updates", "deletes", "bytes"])
    return EXIT_OK


def _file_groups(args: argparse.Namespace) -> int:
    meta = HudiTable.open(args.path).meta
    rows = [asdict(g) for g in file_group_summaries(meta, meta.timeline())]
    _table_out(rows, args.json, ["partition", "file_id", "slices", "base_instant", "log_files", "bytes"])
    return EXIT_OK


def _emit(obj: dict[str, Any]) -> None:
    print(json.dumps(obj, default=str))


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
