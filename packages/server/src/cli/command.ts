import type { FlagSpec, ParsedArgs } from "./parse-args.ts";

/** One `arc <name>` command. `run` gets the arguments after the name and returns the exit code. */
export interface Command {
  /** The word after `arc`. */
  name: string;
  /** One line for `arc --help`. */
  summary: string;
  /** Full help text for `arc <name> --help`. */
  help: string;
  /** Every flag the command reads; any other flag (but --help) makes `arc <name>` exit 2 without running it. */
  flags: FlagSpec;
  /** Runs the command; an ArcError it throws is printed as `arc <name>: <message>` with exit code 2. */
  run(args: ParsedArgs): Promise<number>;
}
