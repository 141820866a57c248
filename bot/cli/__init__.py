"""Floor 4, the entry points: `kindred` and its commands (`main`), each in a module of its own."""
