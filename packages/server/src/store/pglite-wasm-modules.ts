import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** PGlite's two WebAssembly programs, compiled: PostgreSQL itself and initdb. */
export interface PgliteWasmModules {
  pglite: WebAssembly.Module;
  initdb: WebAssembly.Module;
}

let compiled: Promise<PgliteWasmModules> | undefined;

/**
 * PGlite's programs compiled once per process and handed to each PGlite thread it starts. V8 keeps one copy of a
 * module's machine code for every thread that instantiates it, the code its optimizing tier made for PostgreSQL's
 * hot functions included; a thread that compiled the program itself would compile and optimize it all again (about
 * half of a new database's CPU time).
 */
export function pgliteWasmModules(): Promise<PgliteWasmModules> {
  compiled ??= compileModules().catch((error: Error) => {
    compiled = undefined;
    throw new Error(`PGlite's WebAssembly could not be compiled: ${error.message}`, { cause: error });
  });
  return compiled;
}

async function compileModules(): Promise<PgliteWasmModules> {
  const dist = dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite"));
  const compile = async (name: string) => WebAssembly.compile(await readFile(join(dist, name)));
  const [pglite, initdb] = await Promise.all([compile("pglite.wasm"), compile("initdb.wasm")]);
  return { pglite, initdb };
}
