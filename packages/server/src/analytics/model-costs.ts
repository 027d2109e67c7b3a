import type { ModelVersion } from "../store/model-registry.ts";
import type { AnalyticsSettings } from "./analytics-settings.ts";
import type { ModelTokens } from "./analytics-store.ts";

/** Tokens and cost of one model, as the analytics list it. */
export interface ModelCost {
  /** The model's name: its Arc model version's name where the tenant has it, else the served, else the requested. */
  model: string;
  promptTokens: number;
  completionTokens: number;
  /** USD at the price set for the model; null when none is set. */
  costUsd: number | null;
}

/**
 * Tokens and cost per model, aliases resolved: a call to the alias `arc` (or any requested name) that Arc routed to a
 * model version counts under that version's name, together with the calls that name the version's served name, so
 * one model is one row (a call that names a version by its name, served or requested, counts under it too). Its price is the one set for the version's name, else its id, else the served name, else the
 * requested name (the first the price table holds).
 */
export function modelCosts(
  tokens: ModelTokens[],
  models: ModelVersion[],
  prices: AnalyticsSettings["prices"],
): ModelCost[] {
  const byId = new Map(models.map((m) => [m.id, m]));
  const byName = new Map(models.map((m) => [m.name, m]));
  const rows = new Map<string, ModelCost & { names: string[] }>();
  for (const t of tokens) {
    const version =
      (t.modelVersion ? byId.get(t.modelVersion) : undefined) ??
      byName.get(t.modelServed ?? "") ??
      byName.get(t.modelRequested ?? "");
    const names = [version?.name, version?.id, t.modelVersion, t.modelServed, t.modelRequested].filter(
      (n): n is string => typeof n === "string" && n !== "",
    );
    const model = version?.name ?? t.modelServed ?? t.modelRequested ?? t.modelVersion ?? "unknown";
    const row = rows.get(model) ?? { model, promptTokens: 0, completionTokens: 0, costUsd: null, names: [] };
    row.promptTokens += t.promptTokens;
    row.completionTokens += t.completionTokens;
    for (const name of names) if (!row.names.includes(name)) row.names.push(name);
    rows.set(model, row);
  }
  return [...rows.values()]
    .sort((a, b) => a.model.localeCompare(b.model))
    .map(({ names, ...row }) => {
      const priced = names.find((n) => Object.hasOwn(prices, n));
      const price = priced === undefined ? undefined : prices[priced];
      return {
        ...row,
        costUsd: price
          ? (row.promptTokens * price.prompt + row.completionTokens * price.completion) / 1e6
          : null,
      };
    });
}
