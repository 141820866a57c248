"""A model directory's tokenizer and chat template without transformers: `tokenizers` and jinja2.

Importing transformers' tokenizer classes costs seconds at start-up (see docs/benchmarks.md,
"First run"); the `tokenizers` library they wrap loads `tokenizer.json` in a few milliseconds.
`ChatTokenizer` offers the few calls the local engine makes of a transformers tokenizer, with the
same results, for directories whose tokenizer *is* its `tokenizer.json` (transformers'
`TokenizersBackend` / `PreTrainedTokenizerFast`). Anything else (a slow SentencePiece tokenizer,
a class of its own) is left to transformers: `ChatTokenizer.load` returns None for it.

The chat template is rendered the way transformers renders it: a sandboxed jinja2 environment
with `trim_blocks`, `lstrip_blocks`, loop controls, its `tojson`, `raise_exception` and
`strftime_now`, and the special tokens passed by name.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

# transformers classes that are nothing but tokenizer.json: what they do, `tokenizers` does.
PLAIN_CLASSES = frozenset({"TokenizersBackend", "PreTrainedTokenizerFast"})
SPECIAL_NAMES = ("bos_token", "eos_token", "unk_token", "pad_token")
TEMPLATE_FILE = "chat_template.jinja"


class ChatTokenizer:
    """tokenizer.json, its special tokens and its chat template, as the engine uses them."""

    def __init__(self, tokenizer: Any, special: dict[str, str], chat_template: str | None) -> None:
        self._tokenizer = tokenizer
        self.special_tokens_map = special
        self.chat_template = chat_template
        self._template: Any = None

        def token_id(name: str) -> int | None:
            token = special.get(name)
            return None if token is None else tokenizer.token_to_id(token)

        self.eos_token_id = token_id("eos_token")
        self.pad_token_id = token_id("pad_token")
        self.bos_token_id = token_id("bos_token")

    @classmethod
    def load(cls, model_dir: Path) -> ChatTokenizer | None:
        """The directory's tokenizer, or None when it needs transformers' own tokenizer code."""
        config_path, json_path = model_dir / "tokenizer_config.json", model_dir / "tokenizer.json"
        if not config_path.is_file() or not json_path.is_file():
            return None
        config = json.loads(config_path.read_text(encoding="utf-8"))
        if config.get("tokenizer_class") not in PLAIN_CLASSES or config.get("add_bos_token"):
            return None
        special = {name: _token_text(config[name]) for name in SPECIAL_NAMES if config.get(name)}
        template = config.get("chat_template")
        template_path = model_dir / TEMPLATE_FILE
        if template_path.is_file():
            template = template_path.read_text(encoding="utf-8")
        if template is not None and not isinstance(template, str):
            return None  # named templates (a list): transformers picks among them
        from tokenizers import Tokenizer

        return cls(Tokenizer.from_file(str(json_path)), special, template)

    def __len__(self) -> int:
        return int(self._tokenizer.get_vocab_size(with_added_tokens=True))

    def get_added_vocab(self) -> dict[str, int]:
        """Every added token (the special ones too) and its id, as transformers' tokenizers say."""
        return {token.content: int(i) for i, token in self._tokenizer.get_added_tokens_decoder().items()}

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return list(self._tokenizer.encode(text, add_special_tokens=add_special_tokens).ids)

    def __call__(self, text: str, add_special_tokens: bool = True) -> dict[str, list[int]]:
        return {"input_ids": self.encode(text, add_special_tokens=add_special_tokens)}

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        return str(self._tokenizer.decode(list(ids), skip_special_tokens=skip_special_tokens))

    def apply_chat_template(
        self,
        messages: Sequence[dict[str, str]],
        *,
        add_generation_prompt: bool = False,
        tokenize: bool = True,
    ) -> str | list[int]:
        if self.chat_template is None:
            raise ValueError("this tokenizer has no chat template")
        if self._template is None:
            self._template = _compile(self.chat_template)
        special = self.special_tokens_map
        text = str(
            self._template.render(
                messages=list(messages), add_generation_prompt=add_generation_prompt, **special
            )
        )
        return self.encode(text, add_special_tokens=False) if tokenize else text


def _token_text(value: Any) -> str:
    # tokenizer_config.json writes a special token as its text or as an AddedToken's fields.
    return str(value["content"] if isinstance(value, dict) else value)


def _compile(template: str) -> Any:
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(
        x: Any, ensure_ascii: bool = False, indent: int | None = None, separators: Any = None,
        sort_keys: bool = False,
    ) -> str:  # fmt: skip
        return json.dumps(
            x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        )

    def strftime_now(format: str) -> str:
        return datetime.now().strftime(format)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(template)
