import { InvalidInputError } from "@arc/core";

/** Parsed command line: positionals in order, `--flag value` / `--flag=value` / bare `--flag` (true). */
export interface ParsedArgs {
  /** Arguments that are not flags, in order (a sub-command, ids...). */
  positionals: string[];
  /** Flag values by name without the dashes; `true` for a bare flag. */
  flags: Record<string, string | true>;
}

/** Splits argv into positionals and flags. `--` ends flag parsing. */
export function parseArgs(argv: string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      if (eq > 0) flags[arg.slice(2, eq)] = arg.slice(eq + 1);
      else if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) flags[arg.slice(2)] = argv[++i];
      else flags[arg.slice(2)] = true;
    } else positionals.push(arg);
  }
  return { positionals, flags };
}

/** The string value of a flag, or `fallback`; a bare flag with no value is an error naming the flag. */
export function stringFlag(args: ParsedArgs, name: string, fallback?: string): string | undefined {
  const value = args.flags[name];
  if (value === undefined) return fallback;
  if (value === true)
    throw new InvalidInputError(`--${name} needs a value, e.g. --${name}=...`, { field: name });
  return value;
}

/** The integer value of a flag, or `fallback`; anything but a whole number is an error naming the flag. */
export function intFlag(args: ParsedArgs, name: string, fallback: number): number {
  const value = stringFlag(args, name);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed))
    throw new InvalidInputError(`--${name} expects a whole number, got "${value}"`, { field: name });
  return parsed;
}
