"""`python -m hudi_ops.demo`: the RFC-22 scenario through Airflow (see `hudi_ops.demo.rfc22`)."""

import sys

from hudi_ops.demo.rfc22 import main

sys.exit(main(sys.argv[1:]))
