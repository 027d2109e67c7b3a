/**
 * The grammar is written twice, in TypeScript for the embedded engine (json-matcher.ts, schema-check.ts) and in Python
 * for the PyTorch engine (python/arc_torch/grammar.py). One corpus of grammars and texts (grammar-corpus.json) holds
 * both to the same verdicts: which texts each grammar takes whole, and which grammars are refused before any output.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { OutputGrammar } from "@arc/core";
import { pythonLacks, skipWithout } from "../../../../scripts/required-parts.mjs";
import { torchPython } from "../torch/torch-worker.ts";
import { expandStates, grammarMatcher, stepStates } from "./json-matcher.ts";
import { checkGrammarSchema, GrammarSizeBudget } from "./schema-check.ts";

const CORPUS = fileURLToPath(new URL("./__fixtures__/grammar-corpus.json", import.meta.url));
const PYTHON_VERDICTS = fileURLToPath(new URL("./__fixtures__/grammar_verdicts.py", import.meta.url));

interface GrammarCorpus {
  /** Grammars and texts, each with whether the grammar takes the whole text. */
  matches: { name: string; grammar: OutputGrammar; texts: [text: string, taken: boolean][] }[];
  /** Grammars both engines refuse before any output. */
  refused: { name: string; grammar: OutputGrammar }[];
}

const corpus = JSON.parse(readFileSync(CORPUS, "utf8")) as GrammarCorpus;

/** Whether the TypeScript matcher takes the whole of `text` and may end there. */
function matches(grammar: OutputGrammar, text: string): boolean {
  let states = expandStates([grammarMatcher(grammar)]);
  for (const byte of new TextEncoder().encode(text)) {
    states = stepStates(states, byte);
    if (states.length === 0) return false;
  }
  return states.some((s) => s.accepts);
}

/** The error the TypeScript side refuses the grammar with (its schemas checked, then compiled), or null. */
function refusal(grammar: OutputGrammar): string | null {
  const budget = new GrammarSizeBudget();
  const schemas = grammar.kind === "any-of" ? grammar.grammars : [grammar];
  try {
    for (const [i, g] of schemas.entries())
      if (g.kind === "json-schema") checkGrammarSchema(g.schema, `grammar[${i}].schema`, budget);
    grammarMatcher(grammar);
  } catch (error) {
    return (error as Error).message;
  }
  return null;
}

/** The Python matcher's verdicts on the corpus, from the project's Python (which needs torch for its tensors). */
function pythonVerdicts(): { matches: boolean[][]; refused: (string | null)[] } {
  const run = spawnSync(torchPython(), [PYTHON_VERDICTS, CORPUS], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`grammar_verdicts.py exited ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

const expected = corpus.matches.map((c) => c.texts.map(([, taken]) => taken));

describe("one grammar on both engines: the shared corpus", () => {
  it("the TypeScript matcher takes exactly the corpus's texts", () => {
    assert.deepEqual(
      corpus.matches.map((c) => c.texts.map(([text]) => matches(c.grammar, text))),
      expected,
    );
  });

  it("the TypeScript side refuses every grammar of the corpus's refused list", () => {
    for (const c of corpus.refused) assert.notEqual(refusal(c.grammar), null, c.name);
  });

  const skip = skipWithout("python", pythonLacks(torchPython(), ["torch"]));
  it("the Python matcher takes the same texts and refuses the same grammars", { skip }, () => {
    const python = pythonVerdicts();
    assert.deepEqual(python.matches, expected);
    for (const [i, c] of corpus.refused.entries()) assert.notEqual(python.refused[i], null, c.name);
  });
});
