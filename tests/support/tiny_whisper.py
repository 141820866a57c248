"""A tiny random-weight Whisper, saved as a folder `from_pretrained` reads: a one-layer
`WhisperForConditionalGeneration` built from a config, and a byte-level BPE tokenizer trained here
on a few sentences, with Whisper's special tokens. Nothing is downloaded. It hears nonsense, the
same nonsense for the same samples (greedy), so the local speech path runs end to end.

It is multilingual with one language (English): Whisper detects the language first and writes
its token, which the backend reads back. Special tokens are suppressed after the prefix, so the
nonsense it writes is words (never empty) until its length runs out."""

from __future__ import annotations

from pathlib import Path

from tests.support.run_folder import made_once

# After the words, as in Whisper's own vocabulary: every id past <|notimestamps|> is a timestamp.
SPECIAL = [
    "<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|translate|>",
    "<|startoflm|>", "<|startofprev|>", "<|nocaptions|>", "<|notimestamps|>",
]  # fmt: skip
CORPUS = ["the cat sat on the mat", "hello there my friend", "voice notes are words too", "miso likes fish"]
MAX_TOKENS = 12


def build_tiny_whisper(path: Path) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        GenerationConfig,
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
        WhisperProcessor,
        WhisperTokenizerFast,
    )

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    end = "<|endoftext|>"
    bpe.train_from_iterator(CORPUS * 10, trainers.BpeTrainer(vocab_size=120, special_tokens=[end]))
    tokenizer = WhisperTokenizerFast(
        tokenizer_object=bpe, unk_token=end, bos_token=end, eos_token=end, pad_token=end
    )
    tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL[1:]})
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in SPECIAL}
    config = WhisperConfig(
        vocab_size=len(tokenizer), num_mel_bins=80, d_model=32, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
        max_source_positions=1500, max_target_positions=64, eos_token_id=ids[end], pad_token_id=ids[end],
        bos_token_id=ids[end], decoder_start_token_id=ids["<|startoftranscript|>"],
    )  # fmt: skip
    torch.manual_seed(0)
    model = WhisperForConditionalGeneration(config)
    model.generation_config = GenerationConfig(
        decoder_start_token_id=ids["<|startoftranscript|>"], eos_token_id=ids[end], pad_token_id=ids[end],
        max_new_tokens=MAX_TOKENS, is_multilingual=True, lang_to_id={"<|en|>": ids["<|en|>"]},
        task_to_id={"transcribe": ids["<|transcribe|>"], "translate": ids["<|translate|>"]},
        no_timestamps_token_id=ids["<|notimestamps|>"],
        suppress_tokens=[ids[token] for token in SPECIAL if token != end],
    )  # fmt: skip
    processor = WhisperProcessor(
        feature_extractor=WhisperFeatureExtractor(feature_size=80), tokenizer=tokenizer
    )
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(path))
    processor.save_pretrained(str(path))
    return path


def shared_tiny_whisper(fallback: Path) -> Path:
    """The tiny Whisper, built once per test run (shared by its processes and modules); outside a
    run, built in `fallback`."""
    made = made_once(
        "tiny-whisper",
        lambda folder: folder if (folder / "config.json").exists() else build_tiny_whisper(folder),
    )
    return made or build_tiny_whisper(fallback)
