/**
 * One grammar, two interpreters: grammars are compiled once, in TypeScript (grammar-program.ts), and the embedded
 * engine (grammar-machine.ts) and the PyTorch worker (python/arc_torch/grammar.py) follow the same program. One corpus
 * of grammars and texts (grammar-corpus.json) holds both interpreters to the same verdicts, and the compiler to
 * refusing the corpus's refused grammars before any output; the worker refuses programs that are not well formed.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { OutputGrammar } from "@arc/core";
import { pythonLacks, skipWithout } from "../../../../scripts/required-parts.mjs";
import { torchPython } from "../torch/torch-worker.ts";
import { GrammarError } from "./grammar-bounds.ts";
import { alive, GrammarMachine } from "./grammar-machine.ts";
import { compileGrammar, type GrammarProgram } from "./grammar-program.ts";

const CORPUS = fileURLToPath(new URL("./__fixtures__/grammar-corpus.json", import.meta.url));
const PYTHON_VERDICTS = fileURLToPath(new URL("./__fixtures__/grammar_verdicts.py", import.meta.url));

interface GrammarCorpus {
  /** Grammars and texts, each with whether the grammar takes the whole text. */
  matches: { name: string; grammar: OutputGrammar; texts: [text: string, taken: boolean][] }[];
  /** Grammars the compiler refuses before any output. */
  refused: { name: string; grammar: OutputGrammar }[];
}

const corpus = JSON.parse(readFileSync(CORPUS, "utf8")) as GrammarCorpus;

/** Whether the TypeScript interpreter takes the whole of `text` under `program` and may end there. */
function matches(program: GrammarProgram, text: string): boolean {
  const machine = new GrammarMachine(program);
  let states = machine.start();
  for (const byte of new TextEncoder().encode(text)) {
    states = machine.step(states, byte);
    if (!alive(states)) return false;
  }
  return states.accepts;
}

/** Programs the worker must refuse, each broken in one way. */
const MALFORMED: unknown[] = [
  { start: 0 },
  { start: 5, nodes: [[3]] },
  { start: 0, nodes: [[0, 48, 57, 9]] },
  { start: 0, nodes: [[0, 57, 48, 0]] },
  { start: 0, nodes: [[0, 48, 300, 0]] },
  { start: 0, nodes: [[2, 0]] },
  { start: 0, nodes: [[7]] },
  { start: 0, nodes: ["3"] },
];

/** The Python interpreter's verdicts on the corpus's programs and on MALFORMED, from the project's Python. */
function pythonVerdicts(programs: GrammarProgram[]): { matches: boolean[][]; malformed: (string | null)[] } {
  const dir = mkdtempSync(join(tmpdir(), "arc-grammar-agreement-"));
  try {
    const cases = join(dir, "cases.json");
    const texts = corpus.matches.map((c) => c.texts.map(([text]) => text));
    writeFileSync(
      cases,
      JSON.stringify({
        matches: programs.map((program, i) => ({ program, texts: texts[i] })),
        malformed: MALFORMED,
      }),
    );
    const run = spawnSync(torchPython(), [PYTHON_VERDICTS, cases], { encoding: "utf8" });
    if (run.status !== 0) throw new Error(`grammar_verdicts.py exited ${run.status}: ${run.stderr}`);
    return JSON.parse(run.stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const expected = corpus.matches.map((c) => c.texts.map(([, taken]) => taken));

describe("one grammar on both engines: the shared corpus", () => {
  const programs = corpus.matches.map((c) => compileGrammar(c.grammar));

  it("the TypeScript interpreter takes exactly the corpus's texts", () => {
    assert.deepEqual(
      programs.map((program, i) => corpus.matches[i].texts.map(([text]) => matches(program, text))),
      expected,
    );
  });

  it("the compiler refuses every grammar of the corpus's refused list, naming the part", () => {
    for (const c of corpus.refused) assert.throws(() => compileGrammar(c.grammar), GrammarError, c.name);
  });

  it("a program crosses to the worker as plain JSON", () => {
    for (const program of programs) assert.deepEqual(JSON.parse(JSON.stringify(program)), program);
  });

  const skip = skipWithout("python", pythonLacks(torchPython(), ["torch"]));
  it("the Python interpreter takes the same texts and refuses programs that are not well formed", {
    skip,
  }, () => {
    const python = pythonVerdicts(programs);
    assert.deepEqual(python.matches, expected);
    for (const [i, refusal] of python.malformed.entries())
      assert.notEqual(refusal, null, `malformed program ${i}: ${JSON.stringify(MALFORMED[i])}`);
  });
});
