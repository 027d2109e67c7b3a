import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ARC_STEP_PREFIX, parseVerlMetricsLine, stepRecordsInLog } from "./job-log.ts";

describe("step records in a Ray job's log", () => {
  it("reads VERL's console metric lines as Ray writes them: colour, actor prefix, numpy values", () => {
    // verl/utils/logger/aggregate_logger.py prints `step:N - name:value - ...` (values through pprint.pformat,
    // so numpy scalars print as np.float64(...)); Ray prefixes an actor's lines with `(Name pid=N, ip=...)`
    const lines = [
      "\x1b[36m(TaskRunnerV1 pid=28075)\x1b[0m step:0 - val-core/arc/toolcall/passed/mean@1:np.float64(0.75)",
      "(TaskRunnerV1 pid=28075, ip=10.0.0.2) step:1 - actor/pg_loss:np.float64(0.125) - critic/score/mean:0.6 - actor/lr:1e-06 - actor/grad_norm:np.float32(2.5) - perf/throughput:1234.5 - training/ok:True",
      "Training Progress:  10%|#         | 1/10",
      "(TaskRunnerV1 pid=28075) step:2 - actor/pg_loss:nan - critic/score/mean:np.float64(0.7) - reward_extra_info/passed/mean:0.5",
    ];
    const records = stepRecordsInLog(lines, "verl");
    assert.deepEqual(
      records.map((r) => [
        r.step,
        r.loss,
        r.reward,
        r.evalFailureRate,
        r.learningRate,
        r.gradNorm,
        r.accuracy,
      ]),
      [
        [0, null, null, 0.25, null, null, null],
        [1, 0.125, 0.6, undefined, 1e-6, 2.5, null],
        [2, null, 0.7, undefined, null, null, 0.5],
      ],
    );
    assert.equal(records[1].tokensPerSecond, 1234.5);
    assert.equal(records[1].extra["training/ok"], 1);
    assert.equal(parseVerlMetricsLine("not a step"), null);
  });

  it("reads the step records arc train --json-steps prints, and nothing else", () => {
    const record = { step: 3, algorithm: "sft", loss: 1.5, extra: {} };
    const records = stepRecordsInLog(
      ["run x: sft", `${ARC_STEP_PREFIX}${JSON.stringify(record)}`, `${ARC_STEP_PREFIX}{cut`, "step:4 - a:1"],
      "arc",
    );
    assert.deepEqual(records, [record]);
  });
});
