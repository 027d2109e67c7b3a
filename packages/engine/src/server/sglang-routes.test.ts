/**
 * Contract tests of SGLang's native routes on arc engine serve, held to sglang's shapes: `GenerateReqInput`
 * (`input_ids: Optional[Union[List[List[int]], List[int]]]`, `sampling_params`, `return_logprob`, `rid`), the answer
 * built in `tokenizer_manager._handle_batch_output` (`{"text", "output_ids", "meta_info"}` with
 * `output_token_logprobs` as `(logprob, token_id, None)` and `finish_reason` `{"type": "length", "length": N}`), a
 * batch or `n` > 1 answered as a list prompt by prompt, and `PauseGenerationReqInput`
 * (`mode: Literal["abort", "retract", "in_place"] = "abort"`), where new requests wait
 * (`await self.is_pause_cond.wait_for(lambda: not self.is_pause)`).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { generateToolcallTasks, toolcallFamily } from "@arc/core/families";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { renderChat } from "../tokenizer/chat-template.ts";
import { byteChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import { type RunningEngineServer, startEngineServer } from "./start-engine-server.ts";

const MODEL = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));

const prompts = (count: number) =>
  generateToolcallTasks({ split: "eval", seed: 23, count }).map((t) => renderChat(toolcallFamily.prompt(t)));

interface Sample {
  text: string;
  output_ids: number[];
  meta_info: {
    id: string;
    finish_reason: { type: string; length?: number };
    prompt_tokens: number;
    completion_tokens: number;
    weight_version: string;
    output_token_weight_versions: number[];
    output_token_logprobs?: [number, number, null][];
    output_top_logprobs?: [number, number, null][][];
  };
}

describe("SGLang's /generate and pause routes on arc engine serve", () => {
  let server: RunningEngineServer;
  const root = () => server.baseURL.replace(/\/v1$/, "");
  const post = (path: string, body: unknown) =>
    fetch(`${root()}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  before(async () => {
    server = await startEngineServer(await EmbeddedInferenceEngine.load(MODEL, { maxBatchSize: 16 }), {
      modelId: "toolcall-base",
      tokenizer: byteChatTokenizer,
      allowWeightUpdates: true,
    });
  });
  after(() => server.close());

  it("samples token ids with per-token log-probs, one prompt as an object, a batch as a list", async () => {
    const [a, b] = prompts(2);
    // the parameters it lacks pass at the values that change nothing, as RL clients send them
    const neutral = { min_p: 0, repetition_penalty: 1, stop_token_ids: [] };
    const params = { max_new_tokens: 10, temperature: 1, sampling_seed: 3, ignore_eos: true, ...neutral };
    const one = await post("/generate", {
      input_ids: a,
      sampling_params: params,
      return_logprob: true,
      rid: "r1",
    });
    assert.equal(one.status, 200);
    const single = (await one.json()) as Sample;
    assert.equal(single.output_ids.length, 10);
    assert.deepEqual(single.meta_info.finish_reason, { type: "length", length: 10 });
    assert.equal(single.meta_info.id, "r1");
    assert.equal(single.meta_info.prompt_tokens, a.length);
    assert.equal(single.meta_info.completion_tokens, 10);
    assert.equal(single.meta_info.weight_version, "0");
    assert.deepEqual(
      single.meta_info.output_token_logprobs?.map(([, id, text]) => [id, text]),
      single.output_ids.map((id) => [id, null]),
    );
    assert.ok(single.meta_info.output_token_logprobs?.every(([lp]) => lp <= 0));

    // the same seed through vLLM's route samples the same tokens
    const completion = await post("/v1/completions", {
      model: "toolcall-base",
      prompt: a,
      max_tokens: 10,
      temperature: 1,
      seed: 3,
      ignore_eos: true,
      return_token_ids: true,
    });
    assert.deepEqual(
      ((await completion.json()) as { choices: { token_ids: number[] }[] }).choices[0].token_ids,
      single.output_ids,
    );

    const many = await post("/generate", {
      input_ids: [a, b],
      sampling_params: { ...params, n: 2, max_new_tokens: 4 },
      return_logprob: true,
      top_logprobs_num: 2,
      rid: "batch",
    });
    const list = (await many.json()) as Sample[];
    assert.ok(Array.isArray(list));
    assert.deepEqual(
      list.map((s) => [s.meta_info.id, s.meta_info.prompt_tokens]),
      [
        ["batch_0_0", a.length],
        ["batch_0_1", a.length],
        ["batch_1_0", b.length],
        ["batch_1_1", b.length],
      ],
    );
    for (const s of list) assert.ok(s.meta_info.output_top_logprobs?.every((top) => top.length === 2));
  });

  it("names what it refuses", async () => {
    const [a] = prompts(1);
    const cases: [unknown, RegExp][] = [
      [{ input_ids: a, stream: true }, /^stream: this server answers \/generate whole/],
      [
        { input_ids: a, sampling_params: { repetition_penalty: 1.2 } },
        /^sampling_params: repetition_penalty: this server does not support it/,
      ],
      [
        { input_ids: a, sampling_params: { frequency_penalty: 3 } },
        /^sampling_params: frequency_penalty: expected a number in \[-2, 2\]/,
      ],
      [
        { input_ids: a, sampling_params: { max_new_tokens: 0 } },
        /^sampling_params: max_new_tokens: expected a number in \[1, /,
      ],
      [{ input_ids: a, text: "hi" }, /^text: give either text or input_ids/],
      [{ input_ids: [] }, /^input_ids: expected a non-empty list of token ids/],
      [
        { input_ids: [a, a], sampling_params: [{}] },
        /^sampling_params: expected one per prompt \(2\), got 1/,
      ],
      [{ input_ids: a, lora_path: "tenant-a" }, /^lora_path: this server does not support it/],
      [
        { input_ids: a, logprob_start_len: 0 },
        /^logprob_start_len: this server returns the output tokens' log-probs only/,
      ],
    ];
    for (const [body, message] of cases) {
      const res = await post("/generate", body);
      assert.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
      assert.match(((await res.json()) as { error: { message: string } }).error.message, message);
    }
    const mode = await post("/pause_generation", { mode: "later" });
    assert.equal(mode.status, 400);
  });

  it("holds new requests while paused in place and answers them on continue", async () => {
    const [a] = prompts(1);
    const paused = await post("/pause_generation", { mode: "in_place" });
    // sglang: `{"message": "Generation paused successfully.", "status": "ok"}`
    assert.deepEqual(await paused.json(), { message: "Generation paused successfully.", status: "ok" });
    let answered = false;
    const waiting = post("/generate", { input_ids: a, sampling_params: { max_new_tokens: 3 } }).then(
      (res) => {
        answered = true;
        return res;
      },
    );
    await sleep(300);
    assert.equal(answered, false, "a request sent while paused waits");
    const resumed = await post("/continue_generation", {});
    assert.deepEqual(await resumed.json(), { message: "Generation continued successfully.", status: "ok" });
    assert.equal((await waiting).status, 200);
  });

  it("ends the generations in flight on an aborting pause, with what they have", async () => {
    const [a] = prompts(1);
    const running = post("/generate", {
      input_ids: a,
      sampling_params: { max_new_tokens: 4000, ignore_eos: true },
    });
    await sleep(200);
    await post("/pause_generation", {});
    let sample: Sample;
    try {
      // a request that had not reached the server before the pause would wait for the continue: fail, not hang
      const settled = await Promise.race([running, sleep(10_000).then(() => null)]);
      assert.ok(settled, "the request was in flight when generation paused");
      sample = (await settled.json()) as Sample;
    } finally {
      await post("/continue_generation", {});
    }
    assert.deepEqual(sample.meta_info.finish_reason, { type: "abort", message: "Aborted" });
    assert.ok(sample.output_ids.length < 4000);
  });

  it("serves no pause routes without --allow-weight-updates", async () => {
    const fixed = await startEngineServer(await EmbeddedInferenceEngine.load(MODEL), {
      modelId: "toolcall-base",
    });
    try {
      const res = await fetch(`${fixed.baseURL.replace(/\/v1$/, "")}/pause_generation`, {
        method: "POST",
        body: "{}",
      });
      assert.equal(res.status, 404);
    } finally {
      await fixed.close();
    }
  });
});
