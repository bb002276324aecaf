"""`python -m local_platform.demo`: the RFC-22 scenario through Airflow (see `local_platform.demo.rfc22`)."""

import sys

from local_platform.demo.rfc22 import main

sys.exit(main(sys.argv[1:]))
