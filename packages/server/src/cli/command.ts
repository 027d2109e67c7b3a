/** One `arc <name>` command. `run` gets the arguments after the name and returns the exit code. */
export interface Command {
  name: string;
  /** One line for `arc --help`. */
  summary: string;
  /** Full help text for `arc <name> --help`. */
  help: string;
  run(args: string[]): Promise<number>;
}
