"""The plain Llama engine: a forward pass, sampling and LoRA in torch alone, no transformers."""
