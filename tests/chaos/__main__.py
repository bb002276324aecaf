"""`python -m tests.chaos [--seed N] [--commits 20]` (`make chaos`): a full chaos run on a fresh table,
with its own ZooKeeper server and Kafka broker (`--core`: the small run in `make test`); prints the seed first and one
JSON line of figures last, exits 1 on a finding (the job logs stay in the printed folder).
`--no-kills --zookeeper-restarts 0 --max-tries 3` (`make contention`) runs the same pipelines where
only Hudi refuses jobs (no kills, no orchestrator's faults)."""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import traceback
from dataclasses import replace
from pathlib import Path

from local_platform.kafka_server import KafkaServer
from local_platform.zookeeper_server import ZookeeperServer
from tests.chaos.run import DURING_COMMIT, ChaosFailure, ChaosRun, ChaosSize


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.chaos", description=__doc__)
    parser.add_argument("--seed", type=int, default=None, help="repeat a run (default: a random seed)")
    parser.add_argument("--core", action="store_true", help="the small run in `make test` (the other sizes over it)")
    parser.add_argument("--commits", type=int, default=None,
                        help=f"batches per writer pipeline (default: {ChaosSize.commits})")
    parser.add_argument("--zookeeper-restarts", type=int, default=None,
                        help=f"(default: {ChaosSize.zookeeper_restarts})")
    parser.add_argument("--broker-restarts", type=int, default=None,
                        help=f"kills (-9) and starts of the Kafka broker (default: {ChaosSize.broker_restarts})")
    parser.add_argument("--no-kills", action="store_true",
                        help="the contention run: no kills (with --max-tries 3 as `make contention` runs it)")
    parser.add_argument("--max-tries", type=int, default=None,
                        help=f"tries a batch may take before the run fails as starved (default: {ChaosSize.max_tries})")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 10**6)
    size = ChaosSize.core() if args.core else ChaosSize()
    given = {"commits": args.commits, "zookeeper_restarts": args.zookeeper_restarts,
             "broker_restarts": args.broker_restarts, "max_tries": args.max_tries}
    size = replace(size, **{k: v for k, v in given.items() if v is not None})
    if args.no_kills:  # and no orchestrator's faults: every retry is Hudi refusing a job
        size = replace(size, kill_every=None, twice=0.0, late=0.0, during=0.0, broker_restarts=0)
    work = Path(tempfile.mkdtemp(prefix="hudi-ops-chaos-"))
    print(f"chaos run: seed {seed}, {size}, in {work}", flush=True)
    zookeeper, kafka = ZookeeperServer(work / "zookeeper"), KafkaServer(work / "kafka")
    session = None

    def spark():
        nonlocal session
        from hudi_ops.spark.session import session_builder

        session = session_builder("hudi-ops chaos check", master="local[2]").getOrCreate()
        session.sparkContext.setLogLevel("ERROR")
        return session

    try:
        zookeeper.start()
        kafka.start()
        figures = ChaosRun(work, zookeeper, kafka, seed, size).run(spark)
    except ChaosFailure as e:
        print(f"chaos run with seed {seed} FAILED: {e}", file=sys.stderr, flush=True)
        return 1
    except Exception as e:  # the harness's own failure: the run is not judged, and says so
        trace = work / "harness-error.txt"
        trace.write_text("".join(traceback.format_exception(e)))
        print(f"chaos run with seed {seed} could not be judged: the harness failed with {type(e).__name__}: {e} "
              f"(its trace: {trace})", file=sys.stderr, flush=True)
        return 1
    finally:
        if session is not None:
            session.stop()
        kafka.stop()
        zookeeper.stop()
    for server, done, asked in (("ZooKeeper", figures.zookeeper_restarts, size.zookeeper_restarts),
                                ("The Kafka broker", figures.broker_restarts, size.broker_restarts)):
        if done < asked:
            print(f"chaos run with seed {seed} FAILED: {server} restarted {done} times of {asked}", file=sys.stderr,
                  flush=True)
            return 1
    # none would mean Hudi logs it otherwise than COMMIT_LOCK_TAKEN expects, say (the core run's few
    # kills may all miss: make test asks only for one kill)
    if size.kill_every is not None and not args.core and not figures.kills[DURING_COMMIT]:
        print(f"chaos run with seed {seed} FAILED: no kill landed during a commit: {dict(figures.kills)}",
              file=sys.stderr, flush=True)
        return 1
    print(json.dumps({"chaos": "passed", **figures.to_dict()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
