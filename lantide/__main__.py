from lantide.cli.main import main

raise SystemExit(main())
