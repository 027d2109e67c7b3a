import { readFile } from "node:fs/promises";
import { InvalidInputError, type Rubric, type Verdict } from "@arc/core";
import type { JudgeRecalibration } from "../../failures/judge-recalibrations.ts";
import type { JudgeCalibration } from "../../judges/calibrate-judge.ts";
import type { JudgeModel } from "../../judges/judge-store.ts";
import { arcClient, CLIENT_FLAGS } from "../arc-client.ts";
import type { Command } from "../command.ts";
import { stringFlag } from "../parse-args.ts";

const help = `arc judges — a judge model that detects failures of agents that have no verifier

A tenant's judge reads each trace's last answer against a rubric (what a good answer does, and the failure classes to
report) and answers with a structured verdict. Failures are rubric_violation verdicts whose path is the rubric's
class, so they cluster into patterns like any other. The judge runs on a model behind an upstream the server's admin
allowlisted (ARC_UPSTREAMS: a hosted model, a registered one, or \`arc engine serve\`).

Usage:
  arc judges show [--json]
  arc judges set <rubric.json>            a new rubric version: {"criteria": [...], "classes": [{name, description,
                                          severity: low|medium|high}], "instructions"?: "..."}
  arc judges model <upstream> <model> [--calls-per-minute 60] [--tokens-per-minute 60000]
  arc judges test <trace-id> [--json]     the judge's verdict on a stored trace, now
  arc judges calibrate [--limit 100] [--json]
                                          the judge on the most recent traces your verifiers, people's feedback
                                          or annotations (arc annotations) label (passed or failed, computed now
                                          without the judge): agreement,
                                          Cohen's kappa, and
                                          precision and recall of "failed" and of each class (a rubric class named
                                          as the verifier's failure class, e.g. wrong_argument, compares with it)

A trace the judge cannot judge (its budget spent, the endpoint down or slow, a malformed reply) is kept with
verdict unknown and judged again one to two minutes later.
Options: --url (ARC_URL), --key (ARC_API_KEY; default: the tenant key in <home>/credentials.json),
--home (ARC_HOME; default ./.arc)`;

function printRubric(rubric: Rubric): void {
  console.log(`rubric version ${rubric.version}`);
  if (rubric.instructions) console.log(`  ${rubric.instructions}`);
  for (const c of rubric.criteria) console.log(`  criterion: ${c}`);
  for (const c of rubric.classes) console.log(`  class ${c.name} (${c.severity}): ${c.description}`);
}

function printModel(model: JudgeModel): void {
  console.log(
    `judge model ${model.model} on upstream ${model.upstream}, at most ${model.callsPerMinute} calls and ${model.tokensPerMinute} tokens a minute`,
  );
}

const figure = (x: number | null) => (x === null ? "–" : x.toFixed(3));

/** What labelled the traces, e.g. `verifier:unitconv 2, people's feedback 1`. */
function labelSources(c: JudgeCalibration): string {
  const named = Object.entries(c.labelledBy).map(
    ([by, n]) => `${by === "feedback" ? "people's feedback" : by} ${n}`,
  );
  return named.length > 0 ? named.join(", ") : "none";
}

function printCalibration(c: JudgeCalibration): void {
  const r = c.report;
  console.log(
    `judge ${c.model}, rubric version ${c.rubricVersion}: ${r.items} of ${c.tracesRead} recent traces labelled (${labelSources(c)}); judged ${r.judged}, could not judge ${r.unjudged}`,
  );
  console.log(`agreement ${figure(r.agreement)}   Cohen's kappa ${figure(r.kappa)}`);
  console.log(`failed: precision ${figure(r.failed.precision)}, recall ${figure(r.failed.recall)}`);
  for (const k of r.classes)
    console.log(
      `  class ${k.name}: labelled ${k.labelled}, flagged ${k.flagged}, precision ${figure(k.precision)}, recall ${figure(k.recall)}`,
    );
}

/** The judge's scheduled re-calibration: why it was scheduled, where it stands, and how its last run ended. */
function printRecalibration(r: JudgeRecalibration): void {
  const when = r.status === "scheduled" || r.status === "error" ? `, next at ${r.nextAt}` : "";
  console.log(`re-calibration: ${r.status} (${r.attempts} runs${when}) because ${r.why}`);
  if (r.outcome) console.log(`  last run: ${r.outcome}`);
}

/** `arc judges`: the tenant's rubric and judge model. */
export const judgesCommand: Command = {
  name: "judges",
  summary: "set and test the judge model that detects failures without a verifier (tenant)",
  help,
  flags: {
    ...CLIENT_FLAGS,
    json: "boolean",
    "calls-per-minute": "string",
    "tokens-per-minute": "string",
    limit: "string",
  },
  async run(args) {
    const [action, ...rest] = args.positionals;
    const client = arcClient(args, "tenant");
    if (action === "show") {
      const judges = await client.request<{
        rubric: Rubric | null;
        model: JudgeModel | null;
        trust: { trusted: boolean; basis?: string; reason?: string };
        recalibration: JudgeRecalibration | null;
      }>("GET", "/v1/judges");
      if (args.flags.json) console.log(JSON.stringify(judges, null, 2));
      else {
        if (judges.rubric) printRubric(judges.rubric);
        else console.log("no rubric yet (arc judges set <rubric.json>)");
        if (judges.model) printModel(judges.model);
        else console.log("no judge model yet (arc judges model <upstream> <model>)");
        console.log(
          judges.trust.trusted ? `trusted: ${judges.trust.basis}` : `not trusted yet: ${judges.trust.reason}`,
        );
        if (judges.recalibration) printRecalibration(judges.recalibration);
      }
      return 0;
    }
    if (action === "set") {
      const [file] = rest;
      if (!file)
        throw new InvalidInputError(
          "arc judges set: expected a rubric file, e.g. arc judges set rubric.json",
        );
      const text = await readFile(file, "utf8");
      let rubric: unknown;
      try {
        rubric = JSON.parse(text);
      } catch (error) {
        throw new InvalidInputError(`${file}: not JSON (${(error as Error).message})`, { field: "rubric" });
      }
      printRubric(await client.request<Rubric>("PUT", "/v1/judges/rubric", rubric));
      return 0;
    }
    if (action === "model") {
      const [upstream, model] = rest;
      if (!upstream || !model)
        throw new InvalidInputError(
          "arc judges model: expected <upstream> <model>, e.g. arc judges model local judge-1",
        );
      const limit = (name: string) => {
        const value = stringFlag(args, name);
        return value === undefined ? undefined : Number(value);
      };
      printModel(
        await client.request<JudgeModel>("PUT", "/v1/judges/model", {
          upstream,
          model,
          callsPerMinute: limit("calls-per-minute"),
          tokensPerMinute: limit("tokens-per-minute"),
        }),
      );
      return 0;
    }
    if (action === "test") {
      const [traceId] = rest;
      if (!traceId) throw new InvalidInputError("arc judges test: expected a trace id");
      const { data } = await client.request<{ data: Verdict[] }>("POST", "/v1/judges/test", { traceId });
      if (args.flags.json) console.log(JSON.stringify(data, null, 2));
      else
        for (const v of data)
          console.log(
            `${v.status}${v.failed ? ` ${v.path} (${v.severity})` : ""}: ${v.evidence.message}${v.evidence.snippet ? ` — "${v.evidence.snippet}"` : ""}`,
          );
      return 0;
    }
    if (action === "calibrate") {
      const limit = stringFlag(args, "limit");
      const calibration = await client.request<JudgeCalibration>("POST", "/v1/judges/calibrate", {
        ...(limit === undefined ? {} : { limit: Number(limit) }),
      });
      if (args.flags.json) console.log(JSON.stringify(calibration, null, 2));
      else printCalibration(calibration);
      return 0;
    }
    throw new InvalidInputError(
      `unknown action "${action ?? ""}": expected show, set, model, test or calibrate (see arc judges --help)`,
    );
  },
};
