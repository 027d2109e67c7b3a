/**
 * Arc's reward module for VERL jobs (packages/engine/python/arc_verl/reward.py), run by Python against a running
 * `arc serve`: rows written as VERL's parquet, read back with pyarrow and scored with `compute_score` exactly as VERL
 * calls it (data_source, the response, reward_model.ground_truth, extra_info). Rows with a solution must get the
 * family's verifier's partial credit as Arc's trainer computes it; reference-free rows the tenant's judge's score
 * (the shipped toolcall judge on `arc engine serve`).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  createJudgeDetector,
  formatToolCall,
  type GenResult,
  openAIJudgeClient,
  type PromptRow,
  parseRubric,
  type Task,
  taskAnswerTrace,
  toVerlParquet,
} from "@arc/core";
import { generateToolcallTasks, type ToolcallSolution, toolcallFamily } from "@arc/core/families";
import {
  EmbeddedInferenceEngine,
  type RunningEngineServer,
  startEngineServer,
  TORCH_WORKER_DIR,
  torchPython,
} from "@arc/engine";
import { partialCreditReward } from "@arc/rl";
import { pythonLacks, skipWithout } from "../../../../scripts/required-parts.mjs";
import { loadServerConfig } from "../config/server-config.ts";
import { TOOLCALL_JUDGE_RUBRIC } from "../judges/__fixtures__/toolcall-judge-rubric.ts";
import { type RunningServer, startServer } from "../serve/start-server.ts";

const execFileAsync = promisify(execFile);
const JUDGE = fileURLToPath(new URL("../../../../models/toolcall-judge", import.meta.url));
const python = torchPython();
const skip = skipWithout("python", pythonLacks(python, ["pyarrow"]));

/** An answer to a task: right, a wrong value, the wrong tool, or no call at all, by the task's index. */
function answerOf(task: Task, i: number): string {
  const call = task.solution as ToolcallSolution;
  if (i % 4 === 0) return formatToolCall(call);
  if (i % 4 === 1) {
    const [name] = Object.keys(call.args);
    return formatToolCall({ tool: call.tool, args: { ...call.args, [name]: "wrong" } });
  }
  if (i % 4 === 2) return formatToolCall({ tool: "get_weather", args: { city: "Lima", unit: "c" } });
  return "I cannot help with that.";
}

const row = (task: Task, withSolution: boolean): PromptRow => ({
  id: task.id,
  question: task.question,
  ...(withSolution ? { solution: task.solution } : {}),
  env: task.env,
  meta: { source: "replay", sourceTraceIds: [] },
});

describe("Arc's reward module for VERL, against arc serve", { skip }, () => {
  let judge: RunningEngineServer;
  let server: RunningServer;
  let home: string;

  before(async () => {
    process.env.ARC_TEST_REWARD_JUDGE_KEY = "judge-key";
    judge = await startEngineServer(await EmbeddedInferenceEngine.load(JUDGE), {
      modelId: "toolcall-judge",
      apiKey: "judge-key",
    });
    home = mkdtempSync(join(tmpdir(), "arc-verl-reward-"));
    const upstreams = { judges: { baseUrl: judge.baseURL, apiKeyEnv: "ARC_TEST_REWARD_JUDGE_KEY" } };
    server = await startServer(loadServerConfig({}, { home, port: 0, upstreams }));
    const put = (path: string, body: unknown) =>
      fetch(`${server.url}/v1${path}`, {
        method: "PUT",
        headers: {
          authorization: `Bearer ${server.credentials?.tenantKey}`,
          "content-type": "application/json",
        },
        body: JSON.stringify(body),
      });
    assert.equal((await put("/judges/rubric", TOOLCALL_JUDGE_RUBRIC)).status, 201);
    assert.equal((await put("/judges/model", { upstream: "judges", model: "toolcall-judge" })).status, 200);
  });
  after(async () => {
    await server?.close();
    await judge?.close();
    rmSync(home, { recursive: true, force: true });
  });

  /** compute_score of every row of a VERL parquet file, as VERL calls it, in Python (run async: the server is here). */
  async function scoreInPython(rows: PromptRow[], answers: string[]): Promise<number[]> {
    const dir = mkdtempSync(join(tmpdir(), "arc-verl-rows-"));
    writeFileSync(join(dir, "rows.parquet"), toVerlParquet(rows, { split: "train" }));
    writeFileSync(join(dir, "answers.json"), JSON.stringify(answers));
    const script = [
      "import json, sys",
      "import pyarrow.parquet as pq",
      "from arc_verl.reward import compute_score",
      "rows = pq.read_table(sys.argv[1]).to_pylist()",
      "answers = json.load(open(sys.argv[2]))",
      "scores = [compute_score(r['data_source'], a, r['reward_model']['ground_truth'], r['extra_info'], kind='partial') for r, a in zip(rows, answers)]",
      "print(json.dumps(scores))",
    ].join("\n");
    const run = await execFileAsync(
      python,
      ["-c", script, join(dir, "rows.parquet"), join(dir, "answers.json")],
      {
        cwd: TORCH_WORKER_DIR,
        env: { ...process.env, ARC_URL: server.url, ARC_API_KEY: server.credentials?.tenantKey },
      },
    ).finally(() => rmSync(dir, { recursive: true, force: true }));
    const scored = JSON.parse(run.stdout) as { score: number; passed: number }[];
    for (const s of scored)
      assert.deepEqual(Object.keys(s), ["score", "passed"], "the same keys for every row");
    return scored.map((s) => s.score);
  }

  it("gives 200 rows the scores of the family's verifier, as Arc's trainer rewards them", async () => {
    const tasks = generateToolcallTasks({ split: "production", seed: 4242, count: 200 });
    const answers = tasks.map(answerOf);
    const expected = tasks.map((task, i) =>
      partialCreditReward({
        task,
        sample: { text: answers[i] } as GenResult,
        verdict: toolcallFamily.verify?.({ outputs: [answers[i]], solution: task.solution }) as never,
      }),
    );
    assert.ok(new Set(expected).size >= 3, `scores of several kinds: ${[...new Set(expected)]}`);
    assert.deepEqual(
      await scoreInPython(
        tasks.map((t) => row(t, true)),
        answers,
      ),
      expected,
    );
  });

  it("gives reference-free rows the tenant judge's score", async () => {
    const tasks = generateToolcallTasks({ split: "production", seed: 4343, count: 12 });
    // tool calls only: a reply with no call is one the shipped judge does not always decide
    const answers = tasks.map((task, i) => answerOf(task, i % 3));
    const detector = createJudgeDetector({
      rubric: parseRubric(TOOLCALL_JUDGE_RUBRIC),
      model: "toolcall-judge",
      client: openAIJudgeClient({ baseUrl: judge.baseURL, apiKey: "judge-key", timeoutMs: 120_000 }),
    });
    const expected = await Promise.all(
      tasks.map(async (task, i) => {
        const verdict = await detector.judge(taskAnswerTrace(toolcallFamily, task, answers[i]));
        assert.notEqual(verdict.status, "unknown", `the judge decides ${task.id}`);
        return verdict.score;
      }),
    );
    assert.ok(new Set(expected).size > 1, `the judge tells answers apart: ${expected}`);
    assert.deepEqual(
      await scoreInPython(
        tasks.map((t) => row(t, false)),
        answers,
      ),
      expected,
    );
  });
});
