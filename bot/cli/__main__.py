"""`python -m bot.cli …` is `kindred …`."""

from bot.cli.main import main

raise SystemExit(main())
