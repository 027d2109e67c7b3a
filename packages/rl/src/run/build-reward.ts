import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { InvalidInputError } from "@arc/core";
import type { Recipe } from "../recipe/index.ts";
import { partialCreditReward, type RewardFn, verifierReward, withPenalties } from "../reward/index.ts";

/** The RewardFn a recipe's `reward` block describes; a `module` is imported and its default export used. */
export async function buildReward(block: Recipe["reward"]): Promise<RewardFn> {
  let base: RewardFn = block.kind === "verifier" ? verifierReward : partialCreditReward;
  if (block.module) {
    const mod = (await import(pathToFileURL(resolve(block.module)).href)) as { default?: unknown };
    if (typeof mod.default !== "function") {
      throw new InvalidInputError(
        `reward.module: expected a module whose default export is a function, got ${typeof mod.default}`,
        {
          field: "reward.module",
        },
      );
    }
    base = mod.default as RewardFn;
  }
  return block.truncatedPenalty > 0 ? withPenalties(base, { truncated: block.truncatedPenalty }) : base;
}
