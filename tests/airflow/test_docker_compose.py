"""docker-compose.yaml: Compose validates it, and what it resolves to wires the platform together.

`<compose> config` needs no Docker daemon: it checks the file against the Compose schema, fills in
the variables and prints the result, which these tests read. The Airflow components must agree on
their secrets, the connections must name services of the file, and the Spark driver (in the
scheduler) and executors (on the worker) must see the tables at the same path.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO / "docker-compose.yaml"
DATA_VOLUME, DATA_PATH = "hudi-data", "/opt/hudi-ops/data"
AIRFLOW = ("airflow-init", "airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer")
SPARK = ("spark-master", "spark-worker")
SERVICES = {"postgres", "zookeeper", "s3", *AIRFLOW, *SPARK}
#: What a user would put in .env: every component must pick up the same values
SECRETS = {"AIRFLOW_JWT_SECRET": "j" * 64, "AIRFLOW_API_SECRET_KEY": "k" * 64, "POSTGRES_PASSWORD": "pg-secret"}


@functools.cache
def _compose() -> list[str]:
    """The Compose v2 plugin when the docker CLI has it, else the standalone docker-compose."""
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True, timeout=60).returncode == 0:
        return [docker, "compose"]
    if legacy := shutil.which("docker-compose"):
        return [legacy]
    pytest.fail("no Compose to validate docker-compose.yaml with: install Debian's `docker-compose` package "
                "(apt-get install docker-compose) or the Docker Compose plugin")


def _config(tmp: Path, compose_file: Path = COMPOSE_FILE, **variables: str) -> subprocess.CompletedProcess[str]:
    """`config` on `compose_file` (paths relative to the repository) with only `variables` set:
    an empty env file keeps a developer's .env and shell out of it."""
    env_file = tmp / "empty.env"
    env_file.touch()
    # HOME and DOCKER_CONFIG only so that docker finds a Compose plugin installed under them
    env = {k: os.environ[k] for k in ("PATH", "HOME", "DOCKER_CONFIG") if k in os.environ} | variables
    cmd = [*_compose(), "--env-file", str(env_file), "--project-directory", str(REPO), "-f", str(compose_file),
           "config"]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp, timeout=120)


def _resolved(tmp: Path, **variables: str) -> dict[str, Any]:
    result = _config(tmp, **variables)
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> dict[str, Any]:
    """The file as Compose resolves it with the user's secrets set."""
    return _resolved(tmp_path_factory.mktemp("compose"), **SECRETS)


@pytest.fixture(scope="module")
def defaults(tmp_path_factory) -> dict[str, Any]:
    """The file as Compose resolves it with no variable set: `docker compose up` as it comes."""
    return _resolved(tmp_path_factory.mktemp("compose-defaults"))


# `config` prints the short syntax (docker-compose 1.x) or the long one (Compose v2): read both.


def _env(config: dict[str, Any], service: str) -> dict[str, str]:
    env = config["services"][service].get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: "" if v is None else str(v) for k, v in env.items()}


def _mounts(config: dict[str, Any], service: str) -> set[tuple[str, str]]:
    """(volume name or host path, container path) of each mount."""
    out = set()
    for m in config["services"][service].get("volumes") or []:
        source, target = (m.split(":")[:2]) if isinstance(m, str) else (m.get("source", ""), m["target"])
        out.add((os.path.realpath(source) if source.startswith("/") else source, target))
    return out


def _ports(config: dict[str, Any], service: str) -> set[tuple[str, int, int]]:
    """(host address, host port, container port) of each published port."""
    out = set()
    for p in config["services"][service].get("ports") or []:
        if isinstance(p, dict):
            host_ip, published, target = p.get("host_ip", ""), p.get("published", 0), p["target"]
        else:  # [host_ip:][published:]target[/protocol]
            parts = str(p).split("/")[0].rsplit(":", 2)
            host_ip, published, target = [""] * (3 - len(parts)) + parts
        out.add((host_ip or "", int(published or 0), int(target)))
    return out


def _command(config: dict[str, Any], service: str) -> str:
    command = config["services"][service].get("command") or ""
    return command if isinstance(command, str) else " ".join(command)


def _depends_on(config: dict[str, Any], service: str) -> dict[str, str]:
    deps = config["services"][service].get("depends_on") or {}
    if isinstance(deps, list):
        return dict.fromkeys(deps, "service_started")
    return {name: (spec or {}).get("condition", "service_started") for name, spec in deps.items()}

def test_the_stack_has_airflow_its_database_spark_zookeeper_and_an_s3_server(config):
    assert set(config["services"]) == SERVICES
    assert _env(config, "airflow-scheduler")["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"


def test_every_airflow_and_spark_container_mounts_the_tables_at_the_same_path(config):
    assert DATA_VOLUME in config["volumes"]  # a named volume, not a host folder
    for service in (*AIRFLOW, *SPARK):
        assert (DATA_VOLUME, DATA_PATH) in _mounts(config, service), service


def test_the_spark_executors_run_the_image_of_the_driver(config):
    # PySpark executors need the driver's Python minor version and packages (hudi-ops, pyarrow)
    images = {(config["services"][s]["image"], str(config["services"][s]["build"].get("dockerfile")))
              for s in (*AIRFLOW, *SPARK)}
    assert len(images) == 1
    assert images.pop()[1].endswith("docker/airflow.Dockerfile")


def test_every_airflow_component_gets_the_dags_of_the_repository(config):
    # the plugin comes with the package (its entry point), not from a folder
    for service in AIRFLOW:
        mounts = _mounts(config, service)
        assert (os.path.realpath(REPO / "dags"), "/opt/airflow/dags") in mounts, service
        assert "/opt/airflow/plugins" not in {target for _, target in mounts}, service


def test_every_airflow_component_shares_the_secrets_and_the_execution_api(config):
    envs = {service: _env(config, service) for service in AIRFLOW}
    for service, env in envs.items():
        assert env["AIRFLOW__API_AUTH__JWT_SECRET"] == SECRETS["AIRFLOW_JWT_SECRET"], service
        assert env["AIRFLOW__API__SECRET_KEY"] == SECRETS["AIRFLOW_API_SECRET_KEY"], service
        assert env["AIRFLOW__CORE__LOAD_EXAMPLES"] == "false", service
        # all of Airflow's settings and connections, not only these, are the same everywhere
        airflow_settings = {k: v for k, v in env.items() if k.startswith("AIRFLOW")}
        assert airflow_settings == {k: v for k, v in envs["airflow-apiserver"].items() if k.startswith("AIRFLOW")}
    url = urlsplit(envs["airflow-scheduler"]["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"])
    assert (url.scheme, url.hostname, url.port, url.path) == ("http", "airflow-apiserver", 8080, "/execution/")
    assert "api-server" in _command(config, "airflow-apiserver")


def test_the_defaults_start_a_working_demo(defaults):
    secrets = {(e["AIRFLOW__API_AUTH__JWT_SECRET"], e["AIRFLOW__API__SECRET_KEY"])
               for e in (_env(defaults, s) for s in AIRFLOW)}
    assert len(secrets) == 1
    # both sign with HS512, and PyJWT warns about an HMAC key shorter than the hash
    assert all(len(secret) >= 64 for secret in secrets.pop())
    env = _env(defaults, "airflow-apiserver")
    assert env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS"].split(":")[0] == "admin"
    assert _env(defaults, "airflow-init")["_AIRFLOW_ADMIN_PASSWORD"]


def test_the_airflow_database_is_the_postgres_service(config):
    postgres = _env(config, "postgres")
    for service in AIRFLOW:
        url = urlsplit(_env(config, service)["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"])
        assert url.scheme == "postgresql+psycopg2"  # the driver the image installs (apache-airflow[postgres])
        assert (url.hostname, url.username, url.password, url.path.lstrip("/")) == \
            ("postgres", postgres["POSTGRES_USER"], SECRETS["POSTGRES_PASSWORD"], postgres["POSTGRES_DB"])
        assert _depends_on(config, service)["postgres"] == "service_healthy"
    for service in AIRFLOW[1:]:  # everything waits for the migration and the admin user
        assert _depends_on(config, service)["airflow-init"] == "service_completed_successfully"


def test_the_zookeeper_connection_names_the_zookeeper_service(config, monkeypatch):
    raw = _env(config, "airflow-scheduler")["AIRFLOW_CONN_HUDI_ZOOKEEPER_DEFAULT"]
    conn = json.loads(raw)
    assert (conn["conn_type"], conn["host"], conn["port"]) == ("hudi_zookeeper", "zookeeper", 2181)
    assert "zookeeper" in config["services"]

    from hudi_ops.airflow.hooks.zookeeper_lock import ZookeeperLockHook

    monkeypatch.setenv("AIRFLOW_CONN_HUDI_ZOOKEEPER_DEFAULT", raw)
    options = ZookeeperLockHook("trips").lock_options()
    assert options["hoodie.write.lock.zookeeper.url"] == "zookeeper:2181"
    assert options["hoodie.write.lock.zookeeper.base_path"] == "/hudi/locks"


def test_the_spark_connection_submits_to_the_standalone_master_in_client_mode(config, monkeypatch):
    raw = _env(config, "airflow-scheduler")["AIRFLOW_CONN_SPARK_DEFAULT"]
    assert "--port 7077" in _command(config, "spark-master")
    assert "spark://spark-master:7077" in _command(config, "spark-worker")

    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", raw)
    cmd = SparkSubmitHook(conn_id="spark_default")._build_spark_submit_command("app.py")
    # PySpark cannot run in standalone cluster mode: the driver must run in the task's container
    assert cmd[cmd.index("--master") + 1] == "spark://spark-master:7077"
    assert cmd[cmd.index("--deploy-mode") + 1] == "client"
    # ... the scheduler's, where the executors on the worker reach it by name
    assert _env(config, "airflow-scheduler")["SPARK_LOCAL_HOSTNAME"] == "airflow-scheduler"
    assert config["services"]["airflow-scheduler"]["hostname"] == "airflow-scheduler"


def test_only_the_airflow_ui_and_the_spark_master_ui_are_published_on_localhost(defaults):
    published = {service: ports for service in SERVICES if (ports := _ports(defaults, service))}
    assert published == {"airflow-apiserver": {("127.0.0.1", 8080, 8080)}, "spark-master": {("127.0.0.1", 8081, 8080)}}


def test_every_path_of_the_example_tables_config_is_on_the_shared_volume_or_the_s3_service(config):
    tables = yaml.safe_load((REPO / "dags" / "tables.yaml").read_text())["tables"]
    paths = [table["base_path"] for table in tables.values()]
    paths += [table[job]["source_path"] for table in tables.values() for job in ("ingest", "backfill") if job in table]
    on_s3 = [p for p in paths if p.startswith("s3a://")]
    paths = [p for p in paths if p not in on_s3]
    assert len(paths) >= 3 and on_s3
    # where the driver (scheduler) and the executors (worker) both see the volume
    (mount,) = {target for s in ("airflow-scheduler", "spark-worker") for source, target in _mounts(config, s)
                if source == DATA_VOLUME}
    for path in paths:
        assert PurePosixPath(path).is_relative_to(mount), path


@pytest.mark.parametrize(("original", "broken", "named"), [
    ("    hostname: spark-worker\n", "    hostnme: spark-worker\n", "hostnme"),  # a misspelt key
    ("      condition: service_completed_successfully\n", "      condition: service_finished\n",
     "condition"),  # a value the schema does not allow
])
def test_config_rejects_a_broken_file(tmp_path, original, broken, named):
    text = COMPOSE_FILE.read_text()
    assert original in text
    compose_file = tmp_path / "docker-compose.yaml"
    compose_file.write_text(text.replace(original, broken, 1))
    result = _config(tmp_path, compose_file, **SECRETS)
    assert result.returncode != 0
    assert named in result.stdout + result.stderr


def test_the_example_table_on_s3_reaches_the_s3_service_with_the_same_keys_everywhere(config, monkeypatch):
    """The connection the S3 table names points at the s3 service by path; the bucket of its base path is
    the one airflow-init makes; the Spark executors hold the connection's keys (they read no connection)."""
    from hudi_ops.airflow.hooks.aws import s3_settings

    (table,) = [t for t in yaml.safe_load((REPO / "dags" / "tables.yaml").read_text())["tables"].values()
                if t["base_path"].startswith("s3a://")]
    conn_id = table["aws_conn_id"]
    env_key = f"AIRFLOW_CONN_{conn_id.upper()}"
    for service in AIRFLOW:
        assert env_key in _env(config, service), service
    monkeypatch.setenv(env_key, _env(config, "airflow-scheduler")[env_key])
    s3 = s3_settings(conn_id)
    assert urlsplit(s3.endpoint).hostname in config["services"] and s3.path_style
    bucket = urlsplit(table["base_path"]).netloc
    assert f'create_bucket(Bucket="{bucket}")' in _command(config, "airflow-init")
    worker = _env(config, "spark-worker")
    assert (worker["AWS_ACCESS_KEY_ID"], worker["AWS_SECRET_ACCESS_KEY"]) == (s3.access_key_id, s3.secret_access_key)
    assert _depends_on(config, "airflow-init")["s3"] == "service_healthy"
