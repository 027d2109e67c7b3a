import { delimiter, resolve } from "node:path";
import { ArcError, InvalidInputError, taskFamilies } from "@arc/core";
import { FAMILIES_ENV, familyPathsFromEnv, loadFamiliesFromEnv, loadTaskFamilies } from "@arc/rl";
import type { Command } from "./command.ts";
import { commands } from "./commands/index.ts";
import { closestMatch, parseArgs } from "./parse-args.ts";

function overview(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    "arc — make LLM agents learn from their own production failures",
    "",
    "Usage: arc <command> [options]      arc <command> --help for details",
    "       arc --family <module> <command> [options]      registers a task family first (repeatable)",
    "",
    "Commands:",
    ...lines,
    "",
    `Task families: ${taskFamilies.envs().join(", ")} (arc families describes them; --family <module> adds one).`,
    "",
    "Environment: ARC_HOME (default ./.arc), DATABASE_URL (a PostgreSQL server instead of the embedded one),",
    "ARC_URL and ARC_API_KEY (the server and key that client commands talk to), ARC_FAMILIES (family modules).",
  ].join("\n");
}

/**
 * Loads the family modules of ARC_FAMILIES and of the leading `--family <module>` arguments, and adds the latter to
 * ARC_FAMILIES so the processes a command starts load them too. Returns the `--family` paths.
 */
async function registerFamilies(argv: readonly string[]): Promise<string[]> {
  await loadFamiliesFromEnv();
  const paths: string[] = [];
  for (let i = 0; argv[i] === "--family"; i += 2) {
    const path = argv[i + 1];
    if (!path || path.startsWith("-")) {
      throw new InvalidInputError("--family: expected a module path", { field: "--family" });
    }
    paths.push(resolve(path));
  }
  await loadTaskFamilies(paths);
  if (paths.length) process.env[FAMILIES_ENV] = [...familyPathsFromEnv(), ...paths].join(delimiter);
  return paths;
}

/** Entry point of the `arc` command; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  let families: string[];
  try {
    families = await registerFamilies(argv);
  } catch (error) {
    if (!ArcError.isInstance(error)) throw error;
    console.error(`arc: ${error.message}`);
    return 2;
  }
  const [name, ...rest] = argv.slice(families.length * 2);
  if (!name || name === "--help" || name === "-h" || name === "help") {
    console.log(overview());
    return name ? 0 : 1;
  }
  const command: Command | undefined = commands.find((c) => c.name === name);
  if (!command) {
    const match = closestMatch(
      name,
      commands.map((c) => c.name),
    );
    console.error(
      `arc: unknown command "${name}" (${match ? `did you mean ${match}?` : "arc --help lists the commands"})`,
    );
    return 2;
  }
  try {
    const args = parseArgs(
      rest.map((arg) => (arg === "-h" ? "--help" : arg)),
      { ...command.flags, help: "boolean" },
    );
    if (args.flags.help) {
      console.log(command.help);
      return 0;
    }
    return await command.run(args);
  } catch (error) {
    if (ArcError.isInstance(error)) {
      console.error(`arc ${name}: ${error.message}`);
      return 2;
    }
    throw error;
  }
}
