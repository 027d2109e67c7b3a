import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { pythonLacks, skipWithout } from "../../../../scripts/required-parts.mjs";
import { torchPython } from "../torch/torch-worker.ts";
import { decodeTokens, encodeText, SPECIAL_TOKENS, specialId, VOCAB_SIZE } from "./byte-tokenizer.ts";
import { CHAT_TEMPLATE_JINJA, renderChat, renderChatExample } from "./chat-template.ts";
import { byteToUnicode, readTokenizerFiles, writeTokenizerFiles } from "./tokenizer-files.ts";

/** The project's Python, whose jinja2 renders the template as HF's tokenizer does. */
const python = torchPython();
const noJinja = skipWithout("python", pythonLacks(python, ["jinja2"]));

describe("byte tokenizer and chat template", () => {
  it("round-trips any UTF-8 text through byte ids", () => {
    const text = "héllo, 世界 🙂 <|end|>";
    const ids = encodeText(text);
    assert.ok(
      ids.every((id) => id < 256),
      "special-token strings in text stay plain bytes",
    );
    assert.equal(decodeTokens(ids), text);
    assert.equal(VOCAB_SIZE, 264);
  });

  it("renders system/user/assistant/tool turns with role markers and a generation prompt", () => {
    const ids = renderChat([
      { role: "system", content: "be brief" },
      { role: "user", content: "hi" },
      { role: "assistant", content: null },
      { role: "tool", content: "42" },
    ]);
    const s = (t: Parameters<typeof specialId>[0]) => specialId(t);
    assert.deepEqual(ids, [
      s("<|bos|>"),
      s("<|system|>"),
      ...encodeText("be brief"),
      s("<|end|>"),
      s("<|user|>"),
      ...encodeText("hi"),
      s("<|end|>"),
      s("<|assistant|>"),
      s("<|end|>"),
      s("<|tool|>"),
      ...encodeText("42"),
      s("<|end|>"),
      s("<|assistant|>"),
    ]);
    const ex = renderChatExample([{ role: "user", content: "q" }], "a");
    assert.deepEqual(ex.outputTokens, [97, s("<|end|>")]);
  });

  it("rejects an unknown role, naming the message", () => {
    assert.throws(
      () =>
        renderChat([
          { role: "user", content: "a" },
          { role: "robot", content: "b" },
        ]),
      /messages\[1\]\.role: expected one of system, user, assistant, tool, got "robot"/,
    );
  });

  it("writes HF tokenizer files that read back, with the chat template", async () => {
    const dir = await mkdtemp(join(tmpdir(), "arc-tok-"));
    await writeTokenizerFiles(dir);
    const tok = JSON.parse(await readFile(join(dir, "tokenizer.json"), "utf8"));
    assert.equal(Object.keys(tok.model.vocab).length, 256);
    assert.equal(tok.model.vocab[byteToUnicode()[32]], 32);
    assert.equal(
      tok.added_tokens.find((t: { content: string }) => t.content === "<|end|>").id,
      specialId("<|end|>"),
    );
    const { chatTemplate } = await readTokenizerFiles(dir);
    assert.match(chatTemplate, /<\|' \+ message\['role'\] \+ '\|>/);
  });

  it("renders the same tokens as its Jinja chat_template does under HF's settings", { skip: noJinja }, () => {
    const messages = [
      { role: "system", content: "be brief" },
      { role: "user", content: "héllo, 世界?" },
      { role: "assistant", content: null },
      { role: "tool", content: '{"ok":true}' },
      {
        role: "assistant",
        content: "two calls:",
        tool_calls: [
          {
            id: "c1",
            type: "function" as const,
            function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
          },
          { id: "c2", type: "function" as const, function: { name: "tag_2", arguments: "{}" } },
        ],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c3", type: "function" as const, function: { name: "f", arguments: '{"a":1' } }],
      },
    ];
    const script = [
      "import json, sys",
      "from jinja2.sandbox import ImmutableSandboxedEnvironment",
      "args = json.loads(sys.argv[1])",
      "env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)",
      "print(env.from_string(args['template']).render(messages=args['messages'], bos_token='<|bos|>', add_generation_prompt=True), end='')",
    ].join("\n");
    const render = spawnSync(
      python,
      ["-c", script, JSON.stringify({ template: CHAT_TEMPLATE_JINJA, messages })],
      { encoding: "utf8" },
    );
    assert.equal(
      render.status,
      0,
      `${python} could not render the chat template: ${render.error ?? render.stderr}`,
    );
    const rendered = render.stdout;
    // what HF's tokenizer does with the rendered string: special-token strings become their ids, the rest bytes
    const pattern = new RegExp(`(${SPECIAL_TOKENS.map((s) => s.replace(/[|]/g, "\\|")).join("|")})`);
    const ids = rendered
      .split(pattern)
      .flatMap((piece) =>
        (SPECIAL_TOKENS as readonly string[]).includes(piece)
          ? [specialId(piece as "<|end|>")]
          : encodeText(piece),
      );
    assert.deepEqual(ids, renderChat(messages));
    assert.match(
      rendered,
      /<\|assistant\|>two calls:\n\{"tool":"get_weather","args":\{"city":"Oslo"\}\}\n\{"tool":"tag_2","args":\{\}\}<\|end\|>/,
    );
    assert.match(
      rendered,
      /<\|assistant\|>\{"tool":"f","args":\{"a":1\}<\|end\|>/,
      "arguments are written as sent",
    );
  });
});
