import type { Command } from "../command.ts";

/** Every `arc` command, in the order `arc --help` lists them. One file per command in this folder. */
export const commands: Command[] = [];
