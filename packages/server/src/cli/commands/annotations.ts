import { InvalidInputError } from "@arc/core";
import type { Annotation, ReviewItem } from "../../judges/annotation-store.ts";
import { arcClient, CLIENT_FLAGS } from "../arc-client.ts";
import type { Command } from "../command.ts";
import { stringFlag } from "../parse-args.ts";

const help = `arc annotations — people's labels on traces: the gold set a judge is calibrated on

A label says whether a trace (or one of its steps) passed or failed, with the failure class if known, and why. A
judge's calibration (arc judges calibrate) labels with them every trace no task family's verifier decides. Review
queues hold traces waiting for a label: a calibration puts there the traces where the judge and the label disagreed
(judge-disagreements) and the ones nothing could label (unlabelled).

Usage:
  arc annotations add <trace-id> --label pass|fail --rationale "..." [--class wrong_argument] [--step <step-id>]
  arc annotations list [--trace <trace-id>] [--limit 100] [--json]
  arc annotations queues                    each review queue with the traces still waiting in it
  arc annotations queue <name> [--limit 50] [--json]
                                            the traces of a queue nobody labelled since they joined, oldest first
Options: --url (ARC_URL), --key (ARC_API_KEY; default: the tenant key in <home>/credentials.json),
--home (ARC_HOME; default ./.arc)`;

function printAnnotation(a: Annotation): void {
  console.log(
    `${a.createdAt}  ${a.traceId}${a.stepId ? `/${a.stepId}` : ""}  ${a.label}${a.class ? ` ${a.class}` : ""}  by ${a.author}: ${a.rationale}`,
  );
}

/** `arc annotations`: people's labels and the review queues. */
export const annotationsCommand: Command = {
  name: "annotations",
  summary: "label traces by hand and work through review queues: a judge's gold set (tenant)",
  help,
  flags: {
    ...CLIENT_FLAGS,
    json: "boolean",
    label: "string",
    class: "string",
    rationale: "string",
    step: "string",
    trace: "string",
    limit: "string",
  },
  async run(args) {
    const [action, ...rest] = args.positionals;
    const client = arcClient(args, "tenant");
    const limit = stringFlag(args, "limit");
    const query = (params: Record<string, string | undefined>) => {
      const set = Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined);
      return set.length > 0 ? `?${new URLSearchParams(set)}` : "";
    };
    if (action === "add") {
      const [traceId] = rest;
      if (!traceId)
        throw new InvalidInputError(
          'arc annotations add: expected a trace id, e.g. arc annotations add tr_1 --label fail --rationale "wrong city"',
        );
      const cls = stringFlag(args, "class");
      const step = stringFlag(args, "step");
      const saved = await client.request<Annotation>("POST", "/v1/annotations", {
        traceId,
        label: stringFlag(args, "label"),
        rationale: stringFlag(args, "rationale"),
        ...(cls === undefined ? {} : { class: cls }),
        ...(step === undefined ? {} : { stepId: step }),
      });
      if (args.flags.json) console.log(JSON.stringify(saved, null, 2));
      else printAnnotation(saved);
      return 0;
    }
    if (action === "list") {
      const { data } = await client.request<{ data: Annotation[] }>(
        "GET",
        `/v1/annotations${query({ traceId: stringFlag(args, "trace"), limit })}`,
      );
      if (args.flags.json) console.log(JSON.stringify(data, null, 2));
      else if (data.length === 0) console.log("no annotations yet (arc annotations add <trace-id> ...)");
      else for (const a of data) printAnnotation(a);
      return 0;
    }
    if (action === "queues") {
      const { data } = await client.request<{ data: { queue: string; pending: number }[] }>(
        "GET",
        "/v1/review-queues",
      );
      if (args.flags.json) console.log(JSON.stringify(data, null, 2));
      else if (data.length === 0) console.log("no trace waits for review");
      else for (const q of data) console.log(`${q.queue}: ${q.pending} waiting`);
      return 0;
    }
    if (action === "queue") {
      const [name] = rest;
      if (!name)
        throw new InvalidInputError("arc annotations queue: expected a queue name, e.g. judge-disagreements");
      const { data } = await client.request<{ data: ReviewItem[] }>(
        "GET",
        `/v1/review-queues/${encodeURIComponent(name)}${query({ limit })}`,
      );
      if (args.flags.json) console.log(JSON.stringify(data, null, 2));
      else if (data.length === 0) console.log(`nothing waits in ${name}`);
      else for (const item of data) console.log(`${item.addedAt}  ${item.traceId}: ${item.reason}`);
      return 0;
    }
    throw new InvalidInputError(
      `unknown action "${action ?? ""}": expected add, list, queues or queue (see arc annotations --help)`,
    );
  },
};
