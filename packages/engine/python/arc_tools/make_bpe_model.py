"""A small Qwen2-architecture model with a byte-level BPE tokenizer trained on a text corpus, as an HF checkpoint
with random weights (training it is a recipe's job: recipes/toolcall-bpe-sft.yaml).

    python -m arc_tools.make_bpe_model --corpus corpus.txt --out models/toolcall-bpe [--vocab 1024]

The tokenizer is trained with HF `tokenizers` (byte-level BPE, GPT-2's byte alphabet and split pattern, as Qwen2's);
the chat template is ChatML with a tools section, rendering the OpenAI message format: `tools` (a line per tool,
its signature `name(arg, optional?)`, so that a prompt with tools stays short), assistant `tool_calls` (in the
model's own answer format, `{"tool":name,"args":{...}}`) and `tool` messages.
"""

import argparse
import json
import os

import torch
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import AutoModelForCausalLM, Qwen2Config

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# GPT-2's split pattern (contractions, letters, single digits, punctuation runs, spaces), with digits one at a time as
# Qwen2 splits them
SPLIT = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# Every piece of text is an expression, so that Jinja's whitespace handling (transformers renders with trim_blocks
# and lstrip_blocks) has nothing to trim: the same ids in any Jinja implementation.
CHAT_TEMPLATE = (
    r"""{% if tools %}{{ '<|im_start|>system\n' }}"""
    r"""{% if messages[0].role == 'system' %}{{ messages[0].content + '\n\n' }}{% endif %}"""
    r"""{{ '# Tools' }}"""
    r"""{% for tool in tools %}{{ '\n' + tool.function.name + '(' }}"""
    r"""{% if tool.function.parameters and tool.function.parameters.properties %}"""
    r"""{% for name, spec in tool.function.parameters.properties.items() %}"""
    r"""{% if not loop.first %}{{ ', ' }}{% endif %}{{ name }}"""
    r"""{% if name not in (tool.function.parameters.required or []) %}{{ '?' }}{% endif %}"""
    r"""{% endfor %}{% endif %}{{ ')' }}{% endfor %}{{ '<|im_end|>\n' }}"""
    r"""{% elif messages[0].role == 'system' %}"""
    r"""{{ '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}{% endif %}"""
    r"""{% for message in messages %}"""
    r"""{% if message.role == 'system' and loop.first %}"""
    r"""{% elif message.role == 'assistant' %}{{ '<|im_start|>assistant\n' }}"""
    r"""{% if message.content %}{{ message.content }}{% endif %}"""
    r"""{% if message.tool_calls %}{% for call in message.tool_calls %}"""
    r"""{% if message.content or not loop.first %}{{ '\n' }}{% endif %}"""
    r"""{{ '{"tool":' + (call.function.name | tojson) + ',"args":' }}"""
    r"""{% if call.function.arguments is string %}{{ call.function.arguments }}"""
    r"""{% else %}{{ call.function.arguments | tojson }}{% endif %}{{ '}' }}"""
    r"""{% endfor %}{% endif %}{{ '<|im_end|>\n' }}"""
    r"""{% elif message.role == 'tool' %}"""
    r"""{{ '<|im_start|>tool\n<tool_response>' + message.content + '</tool_response><|im_end|>\n' }}"""
    r"""{% else %}{{ '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}{% endif %}"""
    r"""{% endfor %}"""
    r"""{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"""
)


def train_tokenizer(corpus: str, vocab: int) -> Tokenizer:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(SPLIT), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train([corpus], trainer)
    return tokenizer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--vocab", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tokenizer = train_tokenizer(args.corpus, args.vocab)
    tokenizer.save(os.path.join(args.out, "tokenizer.json"))
    ids = {t: tokenizer.token_to_id(t) for t in SPECIAL_TOKENS}
    with open(os.path.join(args.out, "tokenizer_config.json"), "w") as f:
        json.dump({
            "tokenizer_class": "PreTrainedTokenizerFast",
            "bos_token": None,
            "eos_token": "<|im_end|>",
            "pad_token": "<|endoftext|>",
            "model_max_length": 1024,
            "clean_up_tokenization_spaces": False,
            "chat_template": CHAT_TEMPLATE,
        }, f, indent=2)
    # transformers 5 takes rope_theta as a keyword and files it under rope_parameters; its signature does not name it
    config = Qwen2Config(
        vocab_size=tokenizer.get_vocab_size(), hidden_size=128, intermediate_size=352, num_hidden_layers=4,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
        rope_theta=10000.0,  # pyright: ignore[reportCallIssue]
        rms_norm_eps=1e-6, tie_word_embeddings=True, bos_token_id=None, eos_token_id=ids["<|im_end|>"],
        pad_token_id=ids["<|endoftext|>"],
    )
    torch.manual_seed(args.seed)
    model = AutoModelForCausalLM.from_config(config)
    model.generation_config.eos_token_id = [ids["<|im_end|>"], ids["<|endoftext|>"]]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.save_pretrained(args.out)
    print(json.dumps({"out": args.out, "vocab": tokenizer.get_vocab_size(), "parameters": model.num_parameters()}))


if __name__ == "__main__":
    main()
