"""Make a tiny random-weight decision model for jev-compatible-server's Transformers backend.

Run with the Python of the host's own virtual environment (torch, transformers, tokenizers)::

    python tests/hosts/tiny_model.py OUT_DIR [--chat-template]

It writes a Hugging Face checkpoint folder: a WordLevel tokenizer holding the label tokens
the server reads logits at (``true``, ``false``, the level indices ``0``..``9`` and the choice
names of :data:`CHOICE_NAMES`), and a 2-layer Llama with hidden size 64, its weights drawn
from a fixed seed, so every run makes the same model and the host answers the same numbers.
The server's token-logit readout takes its prompt and label tokens from the dotted metadata
keys ``decision.prompt_template`` and ``decision.tokens`` in the model's config.

``--chat-template`` gives the tokenizer a plain chat template too, so that an OpenAI-compatible
chat server (``transformers serve``) can serve the same model.

Nothing is downloaded: the model is made here, from nothing but the seed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

#: The seed the weights are drawn from.
SEED = 20

#: Choice names the model has a label token for (the test checks' ``one_of`` names).
CHOICE_NAMES = ("states", "hedges", "unclear", "cleared", "blocked")

#: How the server writes one question as a prompt (``str.format`` fields).
PROMPT_TEMPLATE = "state {state} question {question_name} {instructions} criteria {criteria} answer"

#: A chat template for chat servers: each message's role and text, then the answer cue.
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }} {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}answer{% endif %}"
)

#: The context the model takes, in tokens: a longer prompt is cut by the tokenizer.
CONTEXT = 512


def vocabulary() -> list[str]:
    specials = ["[PAD]", "[UNK]"]
    labels = ["true", "false", *(str(level) for level in range(10)), *CHOICE_NAMES]
    words = ["state", "question", "criteria", "answer"]
    return specials + labels + words


def make(out: Path, *, chat_template: bool = False) -> dict[str, Any]:
    """Write the checkpoint to ``out``; return its decision metadata."""
    # The host's environment has these; the project's own need not (unused-ignore: it may).
    import torch  # type: ignore[import-not-found,unused-ignore]
    from tokenizers import (  # type: ignore[import-not-found,unused-ignore]
        Tokenizer,
        models,
        pre_tokenizers,
    )
    from transformers import (  # type: ignore[import-not-found,unused-ignore]
        LlamaConfig,
        LlamaForCausalLM,
        PreTrainedTokenizerFast,
    )

    vocab = {token: index for index, token in enumerate(vocabulary())}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="[UNK]",
        pad_token="[PAD]",
        model_max_length=CONTEXT,
    )
    if chat_template:
        fast.chat_template = CHAT_TEMPLATE
    labels = ["true", "false", *(str(level) for level in range(10)), *CHOICE_NAMES]
    metadata = {
        "decision.prompt_template": PROMPT_TEMPLATE,
        "decision.tokens": {label: vocab[label] for label in labels},
    }
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=CONTEXT,
        pad_token_id=vocab["[PAD]"],
        bos_token_id=None,
        eos_token_id=None,
    )
    for key, value in metadata.items():
        setattr(config, key, value)
    torch.manual_seed(SEED)
    model = LlamaForCausalLM(config)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    fast.save_pretrained(out)
    return metadata


def main(argv: list[str]) -> int:
    chat = "--chat-template" in argv
    paths = [arg for arg in argv if arg != "--chat-template"]
    if len(paths) != 1:
        print("usage: tiny_model.py OUT_DIR [--chat-template]", file=sys.stderr)
        return 2
    metadata = make(Path(paths[0]), chat_template=chat)
    print(json.dumps(metadata))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
