import { InvalidInputError } from "@arc/core";
import type { AnalyticsSettings } from "../../analytics/analytics-settings.ts";
import type { TenantAnalytics } from "../../analytics/tenant-analytics.ts";
import { arcClient, CLIENT_FLAGS } from "../arc-client.ts";
import type { Command } from "../command.ts";
import { stringFlag } from "../parse-args.ts";
import { printTable } from "../print-table.ts";

const help = `arc analytics — what Arc's loop has done for a tenant: patterns, fixes, improvement, cost

Usage:
  arc analytics [--since 2026-11-01] [--until 2026-11-28] [--fix-window-days 7] [--json]
  arc analytics settings [--prices <model>=<prompt>:<completion>,...] [--cost-per-failure <usd>] [--json]

  (no action)  patterns found per week; the fix success rate (patterns whose failure rate fell significantly
               after a promotion: a one-sided pooled two-proportion z-test, 7 days on each side by default); each
               model version's failure rate against the version it was trained from; tokens and their cost;
               failures avoided by each promoted version against the baseline it replaced; recommendations
               with their reasons. The last 28 days by default; --since and --until take a date (midnight UTC)
               or a date-time with its offset.
  settings     shows the prices and cost per failure; with flags, sets them (prices in USD per 1M prompt and
               completion tokens, by the model name your traces record; both flags replace what was set)

Options: --url (ARC_URL), --key (ARC_API_KEY; default: the tenant key in <home>/credentials.json),
--home (ARC_HOME; default ./.arc)`;

const fixed = (x: number | null, digits = 3) => (x === null ? "–" : x.toFixed(digits));

/** `--prices a=1:2,b=0.5:1` as the settings' prices, or an error naming the bad entry. */
function parsePrices(text: string): AnalyticsSettings["prices"] {
  const prices: AnalyticsSettings["prices"] = {};
  for (const entry of text.split(",").filter((e) => e.trim() !== "")) {
    const match = /^(.+)=(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)$/.exec(entry.trim());
    if (!match)
      throw new InvalidInputError(
        `--prices: expected <model>=<prompt>:<completion> (USD per 1M tokens), got "${entry}"`,
        { field: "prices" },
      );
    prices[match[1]] = { prompt: Number(match[2]), completion: Number(match[3]) };
  }
  return prices;
}

function printAnalytics(a: TenantAnalytics): void {
  console.log(`analytics from ${a.window.since} to ${a.window.until}`);
  console.log("\npatterns found per week:");
  printTable(
    ["WEEK OF", "PATTERNS"],
    a.patternsPerWeek.map((w) => [w.week, w.patterns]),
  );
  const fix = a.fixSuccess;
  console.log(
    `\nfix success rate: ${fix.rate === null ? "– (no pattern had enough traffic around a promotion)" : `${fix.fixed} of ${fix.tested} tested patterns = ${fixed(fix.rate)}`}  (${fix.test}, ${a.window.fixWindowDays} days each side)`,
  );
  printTable(
    ["PATTERN", "DEPLOYMENT", "BEFORE", "AFTER", "Z", "P", "FIXED"],
    fix.patterns.map((p) => [
      p.label,
      p.deploymentId,
      `${p.before.failures}/${p.before.traces}`,
      `${p.after.failures}/${p.after.traces}`,
      fixed(p.z),
      fixed(p.pValue, 4),
      p.untested ? `untested: ${p.untested}` : p.fixed ? "yes" : "no",
    ]),
  );
  console.log("\nimprovement per model version (judged gateway calls):");
  printTable(
    ["MODEL VERSION", "NAME", "JUDGED", "FAILURE RATE", "PARENT", "PARENT RATE", "CHANGE"],
    a.improvement.map((v) => [
      v.modelVersion,
      v.name ?? "",
      v.judged,
      fixed(v.failureRate),
      v.parentId ?? "–",
      fixed(v.parentFailureRate),
      fixed(v.change),
    ]),
  );
  console.log("\ncost:");
  printTable(
    ["MODEL", "PROMPT TOKENS", "COMPLETION TOKENS", "USD"],
    a.cost.models.map((m) => [
      m.model,
      m.promptTokens,
      m.completionTokens,
      m.costUsd === null ? "no price" : fixed(m.costUsd, 4),
    ]),
  );
  console.log(
    `total ${fixed(a.cost.totalUsd, 4)} USD${a.cost.unpriced.length ? ` (no price set for ${a.cost.unpriced.join(", ")})` : ""}`,
  );
  console.log("\nfailures avoided by promotions (baseline's rate in the window before the promotion):");
  printTable(
    ["MODEL VERSION", "DEPLOYMENT", "BASELINE", "BASELINE RATE", "FAILURE RATE", "JUDGED", "AVOIDED"],
    a.cost.avoided.map((v) => [
      v.modelVersion,
      v.deploymentId,
      v.baselineId,
      fixed(v.baselineFailureRate),
      fixed(v.failureRate),
      v.judged,
      fixed(v.failuresAvoided, 1),
    ]),
  );
  console.log(
    `failures avoided ${fixed(a.cost.failuresAvoided, 1)}${a.cost.failuresAvoidedUsd === null ? " (set a cost per failure to price them)" : ` = ${fixed(a.cost.failuresAvoidedUsd, 2)} USD`}`,
  );
  console.log("\nrecommendations:");
  if (a.recommendations.length === 0) console.log("  none");
  for (const r of a.recommendations) console.log(`- ${r.kind}: ${r.reason}`);
}

/** `arc analytics`: a tenant's learning analytics, and the prices they are costed with. */
export const analyticsCommand: Command = {
  name: "analytics",
  summary:
    "patterns per week, fix success rate, improvement per model version, cost, recommendations (tenant)",
  help,
  flags: {
    ...CLIENT_FLAGS,
    since: "string",
    until: "string",
    "fix-window-days": "string",
    prices: "string",
    "cost-per-failure": "string",
    json: "boolean",
  },
  async run(args) {
    const [action] = args.positionals;
    const client = arcClient(args, "tenant");
    if (action === undefined) {
      const query = new URLSearchParams();
      for (const [flag, key] of [
        ["since", "since"],
        ["until", "until"],
        ["fix-window-days", "fixWindowDays"],
      ] as const) {
        const value = stringFlag(args, flag);
        if (value !== undefined) query.set(key, value);
      }
      const analytics = await client.request<TenantAnalytics>("GET", `/v1/analytics?${query}`);
      if (args.flags.json) console.log(JSON.stringify(analytics, null, 2));
      else printAnalytics(analytics);
      return 0;
    }
    if (action === "settings") {
      const prices = stringFlag(args, "prices");
      const cost = stringFlag(args, "cost-per-failure");
      let settings = await client.request<AnalyticsSettings>("GET", "/v1/analytics/settings");
      if (prices !== undefined || cost !== undefined) {
        const costPerFailure = cost === undefined ? settings.costPerFailure : Number(cost);
        if (costPerFailure !== null && !Number.isFinite(costPerFailure))
          throw new InvalidInputError(`--cost-per-failure: expected a number of USD, got "${cost}"`, {
            field: "costPerFailure",
          });
        settings = await client.request<AnalyticsSettings>("PUT", "/v1/analytics/settings", {
          prices: prices === undefined ? settings.prices : parsePrices(prices),
          costPerFailure,
        });
      }
      if (args.flags.json) console.log(JSON.stringify(settings, null, 2));
      else {
        printTable(
          ["MODEL", "USD / 1M PROMPT", "USD / 1M COMPLETION"],
          Object.entries(settings.prices).map(([model, p]) => [model, p.prompt, p.completion]),
        );
        console.log(`cost per failure: ${settings.costPerFailure ?? "not set"} USD`);
      }
      return 0;
    }
    throw new InvalidInputError(
      `unknown action "${action}": expected none or settings (see arc analytics --help)`,
    );
  },
};
