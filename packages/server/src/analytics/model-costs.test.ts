import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ModelVersion } from "../store/model-registry.ts";
import { modelCosts } from "./model-costs.ts";

const version = { id: "mv_1", name: "support-v2" } as ModelVersion;
const tokens = (
  modelVersion: string | null,
  modelServed: string | null,
  modelRequested: string | null,
  promptTokens: number,
) => ({ modelVersion, modelServed, modelRequested, promptTokens, completionTokens: promptTokens / 2 });

describe("token cost per model", () => {
  it("counts calls to the alias arc and to the served name under the model version that answered them", () => {
    const costs = modelCosts(
      [
        tokens("mv_1", "support-v2", "arc", 1_000_000),
        tokens("mv_1", null, "arc", 1_000_000),
        tokens(null, "support-v2", "support-v2", 2_000_000),
        tokens(null, "gpt-4o", "gpt-4o", 1_000_000),
      ],
      [version],
      { "support-v2": { prompt: 1, completion: 2 } },
    );
    assert.deepEqual(costs, [
      { model: "gpt-4o", promptTokens: 1_000_000, completionTokens: 500_000, costUsd: null },
      { model: "support-v2", promptTokens: 4_000_000, completionTokens: 2_000_000, costUsd: 8 },
    ]);
  });

  it("prices a version by its id or by the served name when its name has no price", () => {
    const [byId] = modelCosts([tokens("mv_1", "served", "arc", 1_000_000)], [version], {
      mv_1: { prompt: 3, completion: 0 },
    });
    assert.equal(byId.costUsd, 3);
    const [byServed] = modelCosts([tokens("mv_1", "served", "arc", 1_000_000)], [version], {
      served: { prompt: 0, completion: 4 },
    });
    assert.equal(byServed.costUsd, 2);
  });
});
