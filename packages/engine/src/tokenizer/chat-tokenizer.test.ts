/**
 * The chat tokenizer against HF transformers itself (AutoTokenizer, run in the project's Python venv): the shipped
 * BPE model's tokenizer and chat template give the ids of `apply_chat_template` for conversations with tools, tool
 * calls and tool results, and encode and decode as `encode` / `decode` do.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { toOpenAiTools } from "@arc/core";
import { TOOLCALL_TOOLS } from "@arc/core/families";
import { torchUnavailable } from "../torch/__fixtures__/torch-available.ts";
import { torchPython } from "../torch/torch-worker.ts";
import { STOP_IDS } from "./byte-tokenizer.ts";
import { renderChat } from "./chat-template.ts";
import { loadChatTokenizer, type TemplateMessage } from "./chat-tokenizer.ts";

const BPE_MODEL = fileURLToPath(new URL("../../../../models/toolcall-bpe", import.meta.url));
const BYTE_MODEL = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));
const REFERENCE = fileURLToPath(new URL("./__fixtures__/hf_chat_reference.py", import.meta.url));

const tools = toOpenAiTools(TOOLCALL_TOOLS);
const call = (name: string, args: string | Record<string, unknown>) => ({
  id: "call_1",
  type: "function" as const,
  function: { name, arguments: args },
});
const chats: { messages: TemplateMessage[]; tools?: object[]; addGenerationPrompt: boolean }[] = [
  {
    messages: [{ role: "user", content: "Reserve Le Petit for 5 on 2026-12-27." }],
    addGenerationPrompt: true,
  },
  {
    messages: [
      { role: "system", content: "You book tables." },
      { role: "user", content: "Weather in Zürich, 東京 and São Paulo? 🙂" },
    ],
    addGenerationPrompt: true,
  },
  {
    messages: [{ role: "user", content: "How many pounds is 1506 euros?" }],
    tools,
    addGenerationPrompt: true,
  },
  {
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather in Oslo?" },
      { role: "assistant", content: null, tool_calls: [call("get_weather", '{"city": "Oslo"}')] },
      { role: "tool", tool_call_id: "call_1", content: '{"temp_c": -3}' },
      { role: "assistant", content: "It is -3 °C." },
      { role: "user", content: "And a table at Sakura House for 7?" },
      {
        role: "assistant",
        content: "Booking it.",
        tool_calls: [
          call("book_table", { place: "Sakura House", people: 7 }),
          call("get_weather", { city: "Kyoto" }),
        ],
      },
    ],
    tools,
    addGenerationPrompt: false,
  },
];
const texts = [
  "",
  "  two  spaces\tand a tab\n",
  '{"tool":"convert_currency","args":{"amount":1506}}',
  "naïve café – 東京 🙂",
  "<|im_end|> typed",
];

const skip = torchUnavailable();

describe("the chat tokenizer of an HF checkpoint, against transformers", { skip }, () => {
  it("renders, encodes and decodes as AutoTokenizer does", async () => {
    const tokenizer = await loadChatTokenizer(BPE_MODEL);
    assert.equal(tokenizer.kind, "hf");
    const run = spawnSync(torchPython(), [REFERENCE], {
      input: JSON.stringify({ dir: BPE_MODEL, chats, texts }),
      encoding: "utf8",
    });
    assert.equal(run.status, 0, run.stderr);
    const want = JSON.parse(run.stdout) as { chats: number[][]; texts: { ids: number[]; decoded: string }[] };
    chats.forEach((chat, i) => {
      const got = tokenizer.render(chat.messages, {
        tools: chat.tools,
        addGenerationPrompt: chat.addGenerationPrompt,
      });
      assert.deepEqual(got, want.chats[i], `conversation ${i}: ${tokenizer.decode(got)}`);
    });
    texts.forEach((text, i) => {
      assert.deepEqual(tokenizer.encode(text), want.texts[i].ids, JSON.stringify(text));
      assert.equal(tokenizer.decode(want.texts[i].ids), want.texts[i].decoded, JSON.stringify(text));
    });
  });

  it("reads tool calls in the syntax its template writes them: Arc's JSON for the shipped BPE model", async () => {
    const tokenizer = await loadChatTokenizer(BPE_MODEL);
    assert.equal(tokenizer.toolCallSyntax, "arc-json");
    const text = tokenizer.decode(
      tokenizer.render(
        [{ role: "assistant", content: null, tool_calls: [call("get_weather", '{"city":"Oslo"}')] }],
        {
          addGenerationPrompt: false,
        },
      ),
    );
    assert.match(text, /\{"tool":"get_weather","args":\{"city":"Oslo"\}\}/);
  });

  it("ends a training reply with the token that ends a turn, which generation stops at", async () => {
    const tokenizer = await loadChatTokenizer(BPE_MODEL);
    const messages = [{ role: "user", content: "hi" }];
    const { promptTokens, outputTokens } = tokenizer.renderExample(messages, "hello");
    assert.deepEqual(promptTokens, tokenizer.render(messages));
    const end = outputTokens.at(-1)!;
    assert.ok(tokenizer.stopIds.has(end));
    assert.equal(tokenizer.decode(outputTokens), "hello");
    const whole = tokenizer.render([...messages, { role: "assistant", content: "hello" }], {
      addGenerationPrompt: false,
    });
    assert.deepEqual(whole.slice(0, promptTokens.length + outputTokens.length), [
      ...promptTokens,
      ...outputTokens,
    ]);
  });
});

describe("the chat tokenizer of Arc's byte-level checkpoints", () => {
  it("is the byte tokenizer and template", async () => {
    const tokenizer = await loadChatTokenizer(BYTE_MODEL);
    assert.equal(tokenizer.kind, "byte");
    const messages = [{ role: "user", content: "hi" }];
    assert.deepEqual(tokenizer.render(messages), renderChat(messages));
    assert.equal(tokenizer.stopIds, STOP_IDS);
  });
});
