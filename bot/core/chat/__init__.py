"""Chat ([chat]): one message in, one reply out; the prompt, the person's words quoted as data,
replies cut at a sentence, and the writes kept while the store is away."""
