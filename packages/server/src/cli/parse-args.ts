import { InvalidInputError } from "@arc/core";

/** How a flag is given: a "string" flag takes a value (`--flag value` or `--flag=value`), a "boolean" one none. */
export type FlagType = "string" | "boolean";

/** The flags a command accepts, by name without the dashes. */
export type FlagSpec = Readonly<Record<string, FlagType>>;

/** Parsed command line: positionals in order, and the flags given. */
export interface ParsedArgs {
  /** Arguments that are not flags, in order (a sub-command, ids, `key=value` overrides...). */
  positionals: string[];
  /** Flag values by name without the dashes; `true` for a boolean flag. */
  flags: Record<string, string | true>;
}

/**
 * Splits argv into positionals and the flags of `spec`; `--` ends flag parsing. A flag not in `spec`, a string
 * flag without its value and a boolean flag with one are InvalidInputErrors naming the flag.
 */
export function parseArgs(argv: string[], spec: FlagSpec): ParsedArgs {
  const positionals: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const name = flag.slice(2);
    const type = flag.startsWith("--") && Object.hasOwn(spec, name) ? spec[name] : undefined;
    if (type === undefined) throw unknownFlag(flag, spec);
    if (type === "boolean") {
      if (eq > 0)
        throw new InvalidInputError(`flag ${flag} takes no value, got "${arg.slice(eq + 1)}"`, {
          field: name,
        });
      flags[name] = true;
    } else if (eq > 0) flags[name] = arg.slice(eq + 1);
    else if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) flags[name] = argv[++i];
    else throw new InvalidInputError(`flag ${flag} needs a value: ${flag} <value>`, { field: name });
  }
  return { positionals, flags };
}

function unknownFlag(flag: string, spec: FlagSpec): InvalidInputError {
  const name = flag.replace(/^--?/, "");
  const known = Object.keys(spec);
  const match = closestMatch(name, known);
  const hint = match
    ? `did you mean --${match}?`
    : `known flags: ${known.map((name) => `--${name}`).join(", ")}`;
  return new InvalidInputError(`unknown flag ${flag} (${hint})`, { field: name });
}

/** The candidate nearest to `word` by edit distance, when it is near enough to be what a typo meant. */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  const limit = Math.min(Math.max(2, Math.floor(word.length / 3)), word.length - 1);
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein distance: the fewest single-character insertions, deletions and substitutions from a to b. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length];
}

/** The value of a string flag, or `fallback` when it was not given. */
export function stringFlag(args: ParsedArgs, name: string, fallback?: string): string | undefined {
  const value = args.flags[name];
  return typeof value === "string" ? value : fallback;
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
