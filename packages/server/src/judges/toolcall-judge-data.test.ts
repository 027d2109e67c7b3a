import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseJudgeReply, parseRubric } from "@arc/core";
import { generateToolcallTasks, verifyToolcall } from "@arc/core/families";
import { EmbeddedInferenceEngine, type RunningEngineServer, startEngineServer } from "@arc/engine";
import {
  judgeExample,
  type LabelledTrace,
  sampleLabelledTraces,
} from "./__fixtures__/toolcall-judge-data.ts";
import { TOOLCALL_JUDGE_RUBRIC } from "./__fixtures__/toolcall-judge-rubric.ts";

const BASE = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));
const rubric = parseRubric(TOOLCALL_JUDGE_RUBRIC);

// The shipped toolcall base answering over real HTTP (`arc engine serve`), labelled by Arc's own detectors.
describe("the toolcall judge's data", () => {
  let server: RunningEngineServer;
  let traces: LabelledTrace[];
  const tasks = generateToolcallTasks({ split: "production", seed: 4242, count: 24 });

  before(async () => {
    server = await startEngineServer(await EmbeddedInferenceEngine.load(BASE), {
      modelId: "base",
      apiKey: "k",
    });
    traces = await sampleLabelledTraces({
      baseURL: server.baseURL,
      apiKey: "k",
      model: "base",
      tasks,
      temperatures: [0, 0],
    });
  });
  after(() => server.close());

  it("labels each answer as the family's verifier judges it, once per distinct answer", () => {
    assert.equal(traces.length, tasks.length, "the second greedy answer repeats the first and is left out");
    for (const { trace, label } of traces) {
      const task = tasks.find((t) => t.question === trace.steps[0].llm?.messages[0].content);
      assert.ok(task, trace.id);
      const output = trace.steps[0].llm?.output;
      const call = output?.toolCalls?.[0]?.function;
      const text = call
        ? `{"tool":${JSON.stringify(call.name)},"args":${call.arguments || "{}"}}`
        : (output?.content ?? "");
      const verdict = verifyToolcall({ outputs: [text], solution: task.solution });
      assert.equal(label.failed, verdict.status === "fail", `${trace.id}: ${text}`);
      if (label.failed) assert.equal(label.class, verdict.failure?.class);
    }
  });

  it("writes each example as the judge's prompt and a verdict the judge's strict reader accepts", () => {
    for (const labelled of traces) {
      const { messages } = judgeExample(rubric, labelled) as {
        messages: { role: string; content: string }[];
      };
      assert.deepEqual(
        messages.map((m) => m.role),
        ["system", "user", "assistant"],
      );
      assert.match(messages[1].content, /\[assistant — the answer to judge\]/);
      const reply = parseJudgeReply(messages[2].content, rubric);
      assert.equal(reply.failed, labelled.label.failed);
      assert.equal(reply.class, labelled.label.failed ? labelled.label.class : "none");
      assert.ok(
        messages[1].content.includes(reply.evidence),
        `the evidence "${reply.evidence}" quotes the trace`,
      );
    }
  });
});
