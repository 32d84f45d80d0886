import sys

from tests.prod_smoke.run import main

sys.exit(main())
