"""The `hoodie.*` options: every key hudi-ops reads or sets, typed (`keys`, on `config_property`); the files and
flags they come in (`properties_file`); the lock's options (`occ`); hudi-ops' defaults and the resolver every
job's options go through (`job_defaults`).

A job's options apply in this order, lowest first, however the job started (an Airflow task, a spark-submit
of the application, `python -m hudi_ops.spark`):
1. Hudi's defaults, for every key nothing below sets;
2. the table's properties (`.hoodie/hoodie.properties`): its fixed settings, which a job's options may
   repeat but never contradict (hudi_ops.spark.jobs.target refuses them);
3. hudi-ops' defaults (`job_defaults.hudi_ops_defaults`), which depend on the job and on the options alone;
4. the tables config: its `defaults`, the table's `hoodie_conf`, then the service's own section (merged
   by hudi_ops.airflow.dag_factory, which turns off in the writers the services that run as jobs of their
   own: hudi_ops.read.table_services);
5. the job's flags: `--props`, then `--hoodie-conf` (hudi_ops.job_specs).
Under Airflow the lock's keys from the table's ZooKeeper connection win over 4 and 5: every pipeline of the
table shares them (hudi_ops.airflow.hooks.zookeeper_lock).
"""
