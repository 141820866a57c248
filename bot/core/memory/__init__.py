"""Memory ([memory]): what a person said becomes lasting memories; recall, scoring, revision and the
controls a person has over what is kept."""
