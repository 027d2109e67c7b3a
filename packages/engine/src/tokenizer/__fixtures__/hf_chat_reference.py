"""HF transformers' own answers for chat-tokenizer.test.ts: reads {dir, cases} as JSON on stdin and prints, per case,
apply_chat_template's ids (tokenize=True), and for each text the ids of encode (no special tokens) and their decode."""
import json
import sys

from transformers import AutoTokenizer

request = json.load(sys.stdin)
tokenizer = AutoTokenizer.from_pretrained(request["dir"])
out = {"chats": [], "texts": []}
for case in request["chats"]:
    ids = tokenizer.apply_chat_template(case["messages"], tools=case.get("tools"),
                                        add_generation_prompt=case["addGenerationPrompt"], tokenize=True)
    if hasattr(ids, "keys"):
        ids = ids["input_ids"]
    out["chats"].append([int(i) for i in ids])
for text in request["texts"]:
    ids = tokenizer.encode(text, add_special_tokens=False)
    out["texts"].append({"ids": ids, "decoded": tokenizer.decode(ids, skip_special_tokens=True)})
print(json.dumps(out))
