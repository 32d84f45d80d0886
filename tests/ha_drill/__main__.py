from tests.ha_drill.run import main

raise SystemExit(main())
