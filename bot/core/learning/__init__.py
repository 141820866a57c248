"""Learning ([learning]): reward from reactions, the nightly dataset and training run, the gate,
and which adapter serves."""
