import { resolve } from "node:path";
import { taskFamilies } from "@arc/core";
import { loadTaskFamilies } from "@arc/rl";
import type { Command } from "../command.ts";
import { stringFlag } from "../parse-args.ts";
import { printTable } from "../print-table.ts";

const HELP = `arc families — the task families this process knows

A task family is what Arc knows about one kind of agent task: its tools, how to prompt for a task, the right answer,
and optionally a task generator, a verifier and a multi-turn session. The built-ins are listed with every family
registered by a module: \`arc --family ./my-family.ts <command>\` (repeatable), the ARC_FAMILIES environment variable
(paths separated by ":") or a recipe's \`families\` key. A module default-exports a family or a list of them.

Usage:
  arc families [--family <module>] [--json]

  columns: env, tools, what it has (generator, verifier, multi-turn), description`;

/** What a family can do, as one short word list. */
function abilities(family: ReturnType<typeof taskFamilies.list>[number]): string {
  return [
    family.generate ? "generator" : undefined,
    family.verify ? "verifier" : "judge only",
    family.session ? "multi-turn" : undefined,
  ]
    .filter((a) => a !== undefined)
    .join(", ");
}

export const familiesCommand: Command = {
  name: "families",
  summary: "the task families this process knows (built-in and registered)",
  help: HELP,
  flags: { json: "boolean", family: "string" },
  async run(args) {
    const module = stringFlag(args, "family");
    if (module) await loadTaskFamilies([resolve(module)]);
    const families = taskFamilies.list();
    if (args.flags.json) {
      const rows = families.map((f) => ({
        env: f.env,
        description: f.description ?? null,
        tools: (f.tools ?? []).map((t) => t.name),
        generator: f.generate !== undefined,
        verifier: f.verify !== undefined,
        multiTurn: f.session !== undefined,
      }));
      console.log(JSON.stringify(rows, null, 2));
      return 0;
    }
    printTable(
      ["env", "tools", "has", "description"],
      families.map((f) => [
        f.env,
        (f.tools ?? []).map((t) => t.name).join(",") || "-",
        abilities(f),
        f.description ?? "",
      ]),
    );
    return 0;
  },
};
