import type { Command } from "../command.ts";
import { engineCommand } from "./engine.ts";

/** Every `arc` command, in the order `arc --help` lists them. One file per command in this folder. */
export const commands: Command[] = [engineCommand];
