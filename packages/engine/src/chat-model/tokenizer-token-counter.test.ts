import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { byteChatTokenizer, loadChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import { byteTokenCounter } from "./byte-token-counter.ts";
import { tokenizerTokenCounter } from "./tokenizer-token-counter.ts";

const bpeModel = fileURLToPath(new URL("../../../../models/toolcall-bpe", import.meta.url));
const texts = [
  "Book a table for 7 at Sakura House, November 14 please.",
  'Call the tool book_table with the arguments {"people": 7}. November is month 11.',
  "São Paulo, 3pm: héllo ✓",
];

describe("tokenizerTokenCounter", () => {
  it("counts a BPE checkpoint's own tokens and cuts at the longest prefix that fits", async () => {
    const tokenizer = await loadChatTokenizer(bpeModel);
    const counter = tokenizerTokenCounter(tokenizer);
    for (const text of texts) {
      assert.equal(counter.count(text), tokenizer.encode(text).length);
      for (const max of [0, 1, 5, 12]) {
        const cut = counter.truncate(text, max);
        assert.ok(text.startsWith(cut), `${JSON.stringify(cut)} is a prefix`);
        assert.ok(counter.count(cut) <= max, `${counter.count(cut)} tokens <= ${max}`);
        const longer = Array.from(text)
          .slice(0, Array.from(cut).length + 1)
          .join("");
        if (longer !== cut) assert.ok(counter.count(longer) > max, `one more character passes ${max}`);
      }
      assert.equal(counter.truncate(text, 1000), text);
    }
  });

  it("agrees with the byte counter on the byte-level tokenizer", () => {
    const counter = tokenizerTokenCounter(byteChatTokenizer);
    for (const text of texts)
      for (const max of [0, 3, 20, 200]) {
        assert.equal(counter.count(text), byteTokenCounter.count(text));
        assert.equal(counter.truncate(text, max), byteTokenCounter.truncate(text, max));
      }
  });
});
