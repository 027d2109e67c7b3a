import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { EmbeddedInferenceEngine } from "@arc/engine";
import type { ChatExample } from "../data/sft-examples.ts";
import { parseRecipe } from "../recipe/index.ts";
import { engineFactory } from "../worker/index.ts";
import { mixRehearsal, REHEARSAL_FILE, readRehearsalPrompts, rehearsalExamples } from "./rehearsal.ts";
import { startRun } from "./run-training.ts";

const TOOLCALL_BASE = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));
const SHIPPED_REHEARSAL = fileURLToPath(
  new URL("../../../../recipes/data/general-rehearsal.jsonl", import.meta.url),
);
const GENERAL_SLICE = fileURLToPath(new URL("../../../server/data/general-slice.jsonl", import.meta.url));

/** Questions the shipped toolcall base answers, and ends, within the rehearsal's token bound. */
const QUESTIONS = [
  "What's the weather in Oslo in celsius?",
  "Add an event called standup on 2026-03-02.",
  "How warm is it in Lima? Use fahrenheit.",
];

async function promptsFile(lines: string[]): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), "arc-rehearsal-")), "prompts.jsonl");
  await writeFile(path, `${lines.join("\n")}\n`);
  return path;
}

const example = (reply: string): ChatExample => ({
  messages: [{ role: "user", content: "q" }],
  reply,
  guided: false,
});

describe("rehearsal", () => {
  it("learns the starting model's own greedy answers, kept in the run's folder for a resumed run", async () => {
    const path = await promptsFile([
      JSON.stringify({ prompt: QUESTIONS[0] }),
      JSON.stringify({ messages: [{ role: "user", content: QUESTIONS[1] }] }),
      JSON.stringify({ prompt: QUESTIONS[2] }),
    ]);
    const runDir = await mkdtemp(join(tmpdir(), "arc-rehearsal-run-"));
    let opened = 0;
    const examples = await rehearsalExamples(path, runDir, async () => {
      opened++;
      return EmbeddedInferenceEngine.load(TOOLCALL_BASE);
    });
    assert.equal(opened, 1);
    const engine = await EmbeddedInferenceEngine.load(TOOLCALL_BASE);
    const direct = await engine.generate(
      QUESTIONS.map((q) => ({ messages: [{ role: "user", content: q }], maxTokens: 96, temperature: 0 })),
    );
    const ended = direct.filter((r) => r.finishReason === "stop");
    assert.ok(ended.length > 0, "the base ends some answers");
    assert.deepEqual(
      examples.map((e) => e.reply),
      ended.map((r) => r.text.trim()),
    );
    assert.ok(existsSync(join(runDir, REHEARSAL_FILE)));
    const again = await rehearsalExamples(path, runDir, async () => {
      throw new Error("a resumed run must not ask its moved-on model");
    });
    assert.deepEqual(again, examples);
  });

  it("refuses a prompts file it cannot use, naming the line", async () => {
    await assert.rejects(
      readRehearsalPrompts(await promptsFile([JSON.stringify({ prompt: "a" }), "{not json"])),
      /prompts\.jsonl:2: not JSON/,
    );
    await assert.rejects(
      readRehearsalPrompts(
        await promptsFile([JSON.stringify({ messages: [{ role: "assistant", content: "hi" }] })]),
      ),
      /prompts\.jsonl:1: expected \{"prompt": "<text>"\} or \{"messages": \[\.\.\.\]\} ending in a user message/,
    );
    await assert.rejects(readRehearsalPrompts(await promptsFile([""])), /at least one rehearsal prompt/);
    await assert.rejects(
      readRehearsalPrompts("/nonexistent/rehearsal.jsonl"),
      /data\.rehearsal: cannot read/,
    );
  });

  it("mixes rehearsal examples in to the share asked, each repeated in turn", () => {
    const task = Array.from({ length: 8 }, (_, i) => example(`task ${i}`));
    const rehearsal = [example("r0"), example("r1"), example("r2")];
    const mixed = mixRehearsal(task, rehearsal, 0.5);
    assert.equal(mixed.length, 16);
    assert.deepEqual(
      mixed.slice(8).map((e) => e.reply),
      ["r0", "r1", "r2", "r0", "r1", "r2", "r0", "r1"],
    );
    assert.equal(mixRehearsal(task, rehearsal, 0.2).length, 10);
    assert.equal(mixRehearsal(task, rehearsal, 0).length, 8);
  });

  it("is refused with any algorithm but SFT", () => {
    assert.throws(
      () =>
        parseRecipe({
          data: { env: "toolcall", rehearsal: SHIPPED_REHEARSAL },
          trainer: { algorithm: "dpo" },
        }),
      /data\.rehearsal: rehearsal answers are learned by SFT only, and this recipe's algorithm is dpo/,
    );
  });

  it("trains an SFT run on the task's examples and the rehearsal answers", async () => {
    const root = await mkdtemp(join(tmpdir(), "arc-rehearsal-sft-"));
    const rehearsal = await promptsFile(QUESTIONS.map((prompt) => JSON.stringify({ prompt })));
    const run = (data: Record<string, unknown>) =>
      startRun(
        parseRecipe({
          name: "rehearsal",
          model: { path: TOOLCALL_BASE },
          data: { env: "toolcall", split: "train", count: 8, evalCount: 0, ...data },
          trainer: { algorithm: "sft", steps: 2, promptsPerStep: 8, learningRate: 1e-4, checkpointEvery: 2 },
        }),
        { runsDir: join(root, "runs"), factory: engineFactory },
      );
    const [plain, rehearsed] = [await run({}), await run({ rehearsal, rehearsalShare: 0.5 })];
    assert.equal(rehearsed.status, "completed");
    const kept = readFileSync(join(rehearsed.dir, REHEARSAL_FILE), "utf8").trim().split("\n");
    assert.ok(kept.length > 0 && kept.length <= QUESTIONS.length);
    assert.ok(!existsSync(join(plain.dir, REHEARSAL_FILE)));
    // a share of 0 rehearses nothing, so the starting model is not asked
    const none = await run({ rehearsal, rehearsalShare: 0 });
    assert.ok(!existsSync(join(none.dir, REHEARSAL_FILE)));
    // with half the examples rehearsing, a step's batch is not the task's alone
    assert.notEqual(rehearsed.records[1].loss, plain.records[1].loss);
  });

  it("ships rehearsal prompts that share none of the general slice's", async () => {
    const rehearsal = await readRehearsalPrompts(SHIPPED_REHEARSAL);
    const gated = new Set(
      readFileSync(GENERAL_SLICE, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).prompt),
    );
    assert.ok(rehearsal.length >= 60);
    for (const messages of rehearsal)
      assert.ok(!gated.has(messages.at(-1)?.content), String(messages.at(-1)?.content));
  });
});
