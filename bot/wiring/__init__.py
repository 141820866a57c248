"""Floor 3, the composition root: it reads the settings, picks an implementation for every port
and wires them into the core. Nothing outside this package picks implementations or reads
`Settings` whole.

- `settings`: the sections of configuration and how they are read;
- `backends`: the store, embedder, inference and job runner each setting chooses;
- `jobs`, `memory_jobs`: every job Kindred runs, defined once for both runners;
- `kindred`: a running companion (`build`), the conversation's policy, the adapters' services;
- `platforms`: each chat platform's own options, the web server, the admin page, beat's lock.
"""
