import sys

from tests.schemathesis_run.run import main

sys.exit(main())
