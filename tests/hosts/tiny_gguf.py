"""Make a tiny random-weight Llama as one GGUF file, for llama.cpp's servers.

Run with the Python of the host's own virtual environment (``gguf`` and ``numpy``, as
tests/hosts/llama-cpp-requirements.txt pins them)::

    python tests/hosts/tiny_gguf.py OUT.gguf

It writes a 2-layer Llama (hidden size 64, 4 heads, feed-forward 128) whose weights are drawn
from a fixed seed, so every run writes the same bytes and the server answers the same numbers,
with a SentencePiece ("llama") tokenizer in the file's metadata: ``<unk>``, ``<s>``, ``</s>``,
the 256 byte tokens ``<0x00>``..``<0xFF>`` (so any text tokenizes), ``▁`` (a space, one token
rather than three bytes), and the few words of :func:`vocabulary`. Nothing is downloaded: the
model is made here, from nothing but the seed.

The chat fallback (``checkprofile.adapters.openai_chat``) reads an answer from the first
token's logprobs, and refuses one whose labels (``yes``/``no``, the letters ``A``.. of a
choice, the digits ``0``.. of a rubric's levels) hold less than half the probability: a model
of random weights alone spreads its probability over its whole vocabulary, every answer is
refused, and the qualify battery has nothing to judge. So one path of the model is wired, and
only one: the token that ends the prompt selects which labels it answers with. The question
message ends by listing its labels (``... yes or no.``, ``...: A, B or C.``,
``...: 0, 1 or 2.``), the chat template adds nothing after it, and the tokenizer merges that
last word into a cue token (``▁no.``, ``▁C.``, ``▁2.``). The cue's embedding sets a few wired
dimensions of the hidden state that no layer writes, and the output layer reads them only into
the label tokens that cue asks for. Which of those labels wins, and by how much, is left to
the random weights: the model answers every kind of question in the form it is asked, and what
it answers tells nothing about the work, as a model that was never trained would.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

#: The seed the weights are drawn from (tests/hosts/tiny_model.py's, for the same reason).
SEED = 20

#: The name the file gives the model (``general.name``).
NAME = "tiny-llama-gguf-seed20"

HIDDEN = 64
LAYERS = 2
HEADS = 4
FEED_FORWARD = 128

#: The context the model takes, in tokens. The tokenizer knows almost no words, so most
#: characters of a request are one byte token each: the chat fallback's system message and a
#: case's material are about 2,000 tokens, more than the 512 a model this small would have.
CONTEXT = 8192

#: SentencePiece's word-start marker: the tokenizer writes each space as it.
SPACE = "\u2581"

#: The labels the chat fallback reads: yes/no, the letters of a choice of up to five answers
#: (tests/hosts/tiny_model.py's five CHOICE_NAMES), the digits of a rubric of up to five levels.
LETTERS = "ABCDE"
DIGITS = "01234"

#: The strength of the wiring: the value a cue sets in its dimensions, and the weight with which
#: a label token reads its own. Strong enough that a question's labels take nearly all the
#: probability (96 to 99% of it), weak enough that the random weights still pick among them.
CUE = 3.0
BIAS = 4.0

# The wired dimensions of the hidden state: 0 for yes/no, 1.. one per letter, then one per
# digit. A choice of n answers (its cue ``▁B.`` .. ``▁E.``) sets the first n letter
# dimensions; a rubric of n levels (``▁1.`` .. ``▁4.``) the first n digit dimensions.
_YES_NO_DIM = 0
_LETTER_DIMS = range(1, 1 + len(LETTERS))
_DIGIT_DIMS = range(1 + len(LETTERS), 1 + len(LETTERS) + len(DIGITS))
WIRED = 1 + len(LETTERS) + len(DIGITS)

# Token types of the GGUF tokenizer (gguf.TokenType).
_NORMAL, _UNKNOWN, _CONTROL, _BYTE = 1, 2, 3, 6

#: Each message as ``role: text``, a line break between two; nothing after the last, so the
#: prompt ends with the question's last word.
CHAT_TEMPLATE = (
    "{% for m in messages %}{% if not loop.first %}\n{% endif %}"
    "{{ m['role'] }}: {{ m['content'] }}{% endfor %}"
)


def answer_tokens() -> dict[str, int]:
    """Each label token, and the wired dimension it reads."""
    tokens = {SPACE + "yes": _YES_NO_DIM, SPACE + "no": _YES_NO_DIM}
    tokens.update({SPACE + letter: dim for letter, dim in zip(LETTERS, _LETTER_DIMS, strict=True)})
    tokens.update({SPACE + digit: dim for digit, dim in zip(DIGITS, _DIGIT_DIMS, strict=True)})
    return tokens


def cue_tokens() -> dict[str, list[int]]:
    """Each cue token (the last word of a question message), and the dimensions it sets."""
    cues = {SPACE + "no.": [_YES_NO_DIM]}
    for count in range(2, len(LETTERS) + 1):
        cues[SPACE + LETTERS[count - 1] + "."] = list(_LETTER_DIMS[:count])
    for count in range(2, len(DIGITS) + 1):
        cues[SPACE + DIGITS[count - 1] + "."] = list(_DIGIT_DIMS[:count])
    return cues


def vocabulary() -> tuple[list[str], list[int]]:
    """The tokens and their types. The tokenizer merges two adjacent pieces only into a token
    of the vocabulary: ``no`` is here so that `` no.`` becomes ``▁no`` then ``▁no.`` (the
    letters and digits get there through their label tokens ``▁C``, ``▁2``)."""
    tokens = ["<unk>", "<s>", "</s>", *(f"<0x{byte:02X}>" for byte in range(256))]
    types = [_UNKNOWN, _CONTROL, _CONTROL, *[_BYTE] * 256]
    words = [SPACE, "no", *answer_tokens(), *cue_tokens()]
    return tokens + words, types + [_NORMAL] * len(words)


def make(out: Path) -> dict[str, Any]:
    """Write the model to ``out``; return what it is."""
    # The host's environment has these; the project's own need not (unused-ignore: it may).
    import gguf  # type: ignore[import-not-found,unused-ignore]
    import numpy  # type: ignore[import-not-found,unused-ignore]

    tokens, types = vocabulary()
    index = {token: number for number, token in enumerate(tokens)}
    size = len(tokens)
    rng = numpy.random.default_rng(SEED)

    def drawn(rows: int, columns: int, scale: float) -> Any:
        return (rng.standard_normal((rows, columns)) * scale).astype(numpy.float32)

    embedding = drawn(size, HIDDEN, 1.0)
    embedding[:, :WIRED] = 0
    for cue, dims in cue_tokens().items():
        embedding[index[cue], dims] = CUE
    output = drawn(size, HIDDEN, HIDDEN**-0.5)
    output[:, :WIRED] = 0
    for label, dim in answer_tokens().items():
        output[index[label], dim] = BIAS

    writer = gguf.GGUFWriter(str(out), "llama")
    writer.add_name(NAME)
    writer.add_description(f"random weights (numpy seed {SEED}); made by tests/hosts/tiny_gguf.py")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(HIDDEN)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FEED_FORWARD)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_dimension_count(HIDDEN // HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(0)  # all float32
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_scores([0.0] * size)
    writer.add_unk_token_id(index["<unk>"])
    writer.add_bos_token_id(index["<s>"])
    writer.add_eos_token_id(index["</s>"])
    writer.add_chat_template(CHAT_TEMPLATE)
    # Shapes as numpy holds them, (rows, columns) = (out, in): GGUF stores them reversed.
    writer.add_tensor("token_embd.weight", embedding)
    ones = numpy.ones(HIDDEN, dtype=numpy.float32)
    for layer in range(LAYERS):
        block = f"blk.{layer}"
        writer.add_tensor(f"{block}.attn_norm.weight", ones)
        for name in ("attn_q", "attn_k", "attn_v"):
            writer.add_tensor(f"{block}.{name}.weight", drawn(HIDDEN, HIDDEN, HIDDEN**-0.5))
        # No layer writes to the wired dimensions: at the last position they hold the cue's.
        attention_out = drawn(HIDDEN, HIDDEN, HIDDEN**-0.5)
        attention_out[:WIRED, :] = 0
        writer.add_tensor(f"{block}.attn_output.weight", attention_out)
        writer.add_tensor(f"{block}.ffn_norm.weight", ones)
        writer.add_tensor(f"{block}.ffn_gate.weight", drawn(FEED_FORWARD, HIDDEN, HIDDEN**-0.5))
        writer.add_tensor(f"{block}.ffn_up.weight", drawn(FEED_FORWARD, HIDDEN, HIDDEN**-0.5))
        down = drawn(HIDDEN, FEED_FORWARD, FEED_FORWARD**-0.5)
        down[:WIRED, :] = 0
        writer.add_tensor(f"{block}.ffn_down.weight", down)
    writer.add_tensor("output_norm.weight", ones)
    writer.add_tensor("output.weight", output)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return {"name": NAME, "seed": SEED, "vocabulary": size, "context": CONTEXT}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: tiny_gguf.py OUT.gguf", file=sys.stderr)
        return 2
    print(json.dumps(make(Path(argv[0]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
