import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type ChatModel, runTeaching } from "@arc/core";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { initWeights } from "../model/llama.ts";
import { configForSize } from "../model/llama-config.ts";
import { type RunningEngineServer, startEngineServer } from "../server/start-engine-server.ts";
import { ChatModelError } from "./chat-model-error.ts";
import { OpenAIChatModel } from "./openai-chat-model.ts";

const tiny = configForSize("tiny");
const messages = [{ role: "user" as const, content: "Convert 12 USD to EUR." }];

describe("OpenAIChatModel against arc engine serve's app over real HTTP", () => {
  let engine: EmbeddedInferenceEngine;
  let server: RunningEngineServer;
  before(async () => {
    engine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 5));
    server = await startEngineServer(engine, { modelId: "student" });
  });
  after(() => server.close());

  it("returns the served model's greedy reply with the server's usage counts", async () => {
    const model = new OpenAIChatModel({ baseURL: server.baseURL, model: "student", apiKey: "unused" });
    const reply = await model.complete(messages, { maxTokens: 10, temperature: 0 });
    const [direct] = await engine.generate([{ messages, maxTokens: 10, temperature: 0 }]);
    assert.equal(reply.text, direct.text);
    assert.equal(reply.promptTokens, direct.promptTokens.length);
    assert.equal(reply.completionTokens, direct.outputTokens.length);
    assert.ok(reply.finishReason === "stop" || reply.finishReason === "length");
  });

  it("fails with the upstream status and message when the endpoint does not serve the model", async () => {
    const model = new OpenAIChatModel({ baseURL: server.baseURL, model: "teacher" });
    const error = await model.complete(messages, { maxTokens: 4, temperature: 0 }).catch((e) => e);
    assert.ok(error instanceof ChatModelError);
    assert.equal(error.upstreamStatus, 404);
    assert.equal(error.isRetryable, false);
    assert.match(error.message, /`teacher` does not exist/);
  });

  it("fails as retryable when nothing listens at the endpoint", async () => {
    const closed = await startEngineServer(engine, { modelId: "student" });
    await closed.close();
    const model = new OpenAIChatModel({ baseURL: closed.baseURL, model: "student" });
    const error = await model.complete(messages, { maxTokens: 4, temperature: 0 }).catch((e) => e);
    assert.ok(error instanceof ChatModelError, String(error));
    assert.equal(error.isRetryable, true);
    assert.equal(error.upstreamStatus, undefined);
  });

  it("rejects a base URL that is not absolute, naming the field", () => {
    assert.throws(() => new OpenAIChatModel({ baseURL: "localhost:8000", model: "m" }), /baseURL: expected/);
  });

  it("runs the whole teaching protocol with student and teacher behind HTTP endpoints", async () => {
    const teacherEngine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 6));
    const teacherServer = await startEngineServer(teacherEngine, { modelId: "teacher" });
    try {
      const student: ChatModel = new OpenAIChatModel({ baseURL: server.baseURL, model: "student" });
      const teacher: ChatModel = new OpenAIChatModel({ baseURL: teacherServer.baseURL, model: "teacher" });
      const run = await runTeaching({
        student,
        teacher,
        task: { question: "Convert 12 USD to EUR.", solution: "11.04" },
        mode: "always",
        verify: ({ answer }) => answer === "11.04",
        templates: { teacherAlways: "Q: {question}\nStudent: {approach}\nTeach:" },
        maxTeacherTokens: 24,
        maxSolutionTokens: 16,
      });
      assert.deepEqual(
        run.phases.map((p) => [p.phase, p.model]),
        [
          ["probe", "student"],
          ["teaching", "teacher"],
          ["solution", "student"],
          ["baseline", "student"],
        ],
      );
      assert.ok(run.phases.every((p) => p.promptTokens > 0 && p.completionTokens <= p.maxTokens));
      assert.ok(run.phases[0].completionTokens <= 50);
      assert.equal(run.outcome?.baselineScore, 0);
    } finally {
      await teacherServer.close();
    }
  });
});
