import { ArcError } from "@arc/core";
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
    "",
    "Commands:",
    ...lines,
    "",
    "Environment: ARC_HOME (default ./.arc), DATABASE_URL (a PostgreSQL server instead of the embedded one),",
    "ARC_URL and ARC_API_KEY (the server and key that client commands talk to).",
  ].join("\n");
}

/** Entry point of the `arc` command; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
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
