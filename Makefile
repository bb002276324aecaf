# Set-up and checks for hudi-ops. `make demo` and `make test` each create .venv and fetch Hudi's
# Spark bundle, ZooKeeper's server and the s3a connector with Maven into .cache/jars when needed (once: later runs are
# offline). They need Python 3.11, a Java 17 JDK (javac builds hudi-ops' fix for Hudi 1.1.1) and Maven; the
# tests also run three Debian packages.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Hudi's release: the default of hudi_ops/spark/hudi_bundle.py, or `make test HUDI_OPS_HUDI_VERSION=1.2.0`
JARS := .cache/jars/.fetched-$(or $(HUDI_OPS_HUDI_VERSION),default)

export PYSPARK_PYTHON := $(abspath $(PY))
export PYSPARK_DRIVER_PYTHON := $(abspath $(PY))

.PHONY: venv jars system-check demo up test test-long soak chaos contention lint bench clean

# pyproject.toml's ranges, at the versions constraints.txt names (the ones the suite runs), and the checkout on
# the venv's path: the development side (local_platform, tests, bench), which the wheel leaves out
$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]' -c constraints.txt
	$(PY) -c 'import sys, sysconfig; open(sysconfig.get_paths()["purelib"] + "/hudi-ops-checkout.pth", "w").write(sys.argv[1] + "\n")' $(CURDIR)
	touch $(STAMP)

# every jar (Hudi's bundle and hudi-ops' classes for it, s3a, ZooKeeper, Kafka, YARN), then the jobs' class-data-sharing
# archive: hudi_ops/jars.py; the servers the platform and the tests start: local_platform/jars.py
$(JARS): $(STAMP) hudi_ops/jars.py local_platform/jars.py hudi_ops/spark/hudi_bundle.py hudi_ops/spark/hudi_java.py $(wildcard hudi_ops/spark/java/*/*.java) local_platform/zookeeper_server.py local_platform/kafka_server.py hudi_ops/spark/kafka_connector.py local_platform/yarn_cluster.py hudi_ops/spark/s3a.py hudi_ops/spark/driver_jvm.py hudi_ops/spark/class_sharing.py
	$(PY) -m hudi_ops.jars fetch
	$(PY) -m local_platform.jars fetch
	touch $(JARS)

# what the tests run from Debian: a headless browser and its WebDriver, Compose's validation of
# docker-compose.yaml, libfaketime for commits hours in the past, Prometheus and its push gateway (Hudi's metrics)
TEST_PACKAGES := chromium chromium-driver docker-compose faketime prometheus prometheus-pushgateway
system-check:
	@missing=""; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v chromedriver >/dev/null || missing="$$missing chromium-driver"; \
	command -v docker-compose >/dev/null || docker compose version >/dev/null 2>&1 || missing="$$missing docker-compose"; \
	ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1 || missing="$$missing faketime"; \
	command -v prometheus >/dev/null || missing="$$missing prometheus"; \
	command -v prometheus-pushgateway >/dev/null || missing="$$missing prometheus-pushgateway"; \
	if [ -n "$$missing" ]; then \
	  echo "make test needs Debian's$$missing; install them with:"; \
	  echo "  sudo apt-get install -y --no-install-recommends $(TEST_PACKAGES)"; exit 2; fi

venv: $(STAMP)

jars: $(JARS)

# `make demo UP=1` leaves the demo's Airflow up afterwards, until Ctrl-C; `make demo S3=1` puts the
# table on a local S3 server (moto's), written through s3a
demo: $(STAMP) $(JARS)
	$(PY) -m local_platform.demo $(if $(UP),--up) $(if $(S3),--s3)

# the platform on 127.0.0.1:8080 (PORT=...) with $$HUDI_OPS_TABLES_CONFIG (or an example table), until Ctrl-C
up: $(STAMP) $(JARS)
	$(PY) -m local_platform.platform $(if $(PORT),--port $(PORT))

# two workers (pytest-xdist), each taking the next test (slow ones first; a module with a module-scoped
# fixture, like one Airflow stack or one chromium, as a whole: tests/conftest.py); ends with the 30
# slowest tests' times (CI's log keeps them). The long end-to-end runs and one of each pair of
# variants (marked `long`) are test-long's: make test keeps a core of each run and the other variant
PYTEST := $(PY) -m pytest -q -n 2 --dist loadgroup --no-loadscope-reorder --durations=30
test: system-check lint $(STAMP) $(JARS)
	$(PYTEST) -m "not long"

# the rest of the platform's DAGs on a make up of their own, YARN cluster mode, the standalone cluster,
# the S3 variants, the 12-commit soaks beside make test's one, second variants (docs/development.md; CI
# runs make test alone)
test-long: system-check $(STAMP) $(JARS)
	$(PYTEST) -m long

# the 40-commit soaks with Hudi's own triggers, every job a spark-submit of its own (make test runs
# a 12-commit one, make test-long the others, with triggers a few commits apart)
soak: $(STAMP) $(JARS)
	HUDI_OPS_SOAK=full $(PY) -m pytest -q --timeout 3600 tests/integration/test_soak.py

# concurrent pipelines on one table under kills and ZooKeeper restarts (tests/chaos); `make chaos SEED=7` repeats a run
chaos: $(STAMP) $(JARS)
	$(PY) -m tests.chaos $(if $(SEED),--seed $(SEED))

# the chaos run's pipelines without kills or restarts: every retry is Hudi refusing a job; fails when a
# batch or service run needs more than 3 tries
contention: $(STAMP) $(JARS)
	$(PY) -m tests.chaos --no-kills --zookeeper-restarts 0 --max-tries 3 $(if $(SEED),--seed $(SEED))

# ruff over the package, the local platform, the tests, the benchmarks and the DAG files (make test runs it first)
lint: $(STAMP)
	$(VENV)/bin/ruff check hudi_ops local_platform tests bench dags

bench: $(STAMP) $(JARS)
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .cache
