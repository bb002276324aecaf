"""`make up` without a tables config serves an example table. The platform itself, started as a user starts
it and stopped with Ctrl-C, is tests/airflow/test_local_airflow.py's stack."""

from __future__ import annotations

from hudi_ops.airflow.dag_factory import TABLES_CONFIG_ENV, dags_from_file
from hudi_ops.airflow.tables_config import read_tables_config
from hudi_ops.local.platform import Platform, chosen_tables_config, example_tables_config


def test_without_a_tables_config_make_up_makes_an_example_table_with_its_folders(tmp_path, monkeypatch):
    monkeypatch.delenv(TABLES_CONFIG_ENV, raising=False)
    config = chosen_tables_config(tmp_path)
    assert config == tmp_path / "tables.yaml" and config.read_text().startswith("# written by `make up`")
    assert (tmp_path / "data" / "landing" / "trips").is_dir() and (tmp_path / "data" / "history" / "trips").is_dir()
    platform = Platform(tmp_path, config, port=1)  # not started: what it would serve
    assert set(platform.tables) == {"trips"} and not platform.refused
    (table,) = read_tables_config(config).tables.values()
    assert table.ingest.source_path == str(tmp_path / "data" / "landing" / "trips")
    assert set(dags_from_file(config)) == {"hudi_ingest__trips", "hudi_backfill__trips", "hudi_services__trips",
                                           "hudi_restore__trips"}
    (tmp_path / "data" / "landing" / "trips" / "a.parquet").write_bytes(b"")
    example_tables_config(tmp_path)  # a second start keeps what landed
    assert (tmp_path / "data" / "landing" / "trips" / "a.parquet").is_file()


def test_make_up_serves_the_tables_config_it_is_given(tmp_path, monkeypatch):
    given = tmp_path / "mine.yaml"
    monkeypatch.setenv(TABLES_CONFIG_ENV, str(given))
    assert chosen_tables_config(tmp_path / "home") == given and not (tmp_path / "home").exists()
