/**
 * Makes the shipped general slice, packages/server/data/general-slice.jsonl: prompts unrelated to any agent's task
 * (arithmetic, copying, capital cities, unit facts, simple instructions), each with the answer its check compares.
 * Validation asks both models these and gates the candidate on keeping what the production model answered right.
 * Also makes recipes/data/general-rehearsal.jsonl: prompts of the same kinds that share none of the slice's, which an
 * SFT recipe rehearses (`data.rehearsal`) so that what the gate measures is not what training saw.
 * Deterministic: the same items every time, so the files change only when this script does.
 *
 *   node --import tsx scripts/make-general-slice.ts
 */
import { writeFileSync } from "node:fs";
import { GeneralItem } from "@arc/core";

const OUT = new URL("../packages/server/data/general-slice.jsonl", import.meta.url);
const REHEARSAL_OUT = new URL("../recipes/data/general-rehearsal.jsonl", import.meta.url);

/** A small linear congruential generator: fixed numbers without a dependency. */
function numbers(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state;
  };
}

const next = numbers(62);
const pick = (lo: number, hi: number) => lo + (next() % (hi - lo + 1));
const nextRehearsal = numbers(61);
const pickRehearsal = (lo: number, hi: number) => lo + (nextRehearsal() % (hi - lo + 1));

const OPERATIONS: [string, (x: number, y: number) => number][] = [
  ["+", (x, y) => x + y],
  ["-", (x, y) => x - y],
  ["*", (x, y) => x * y],
];
/** `count` arithmetic items drawn with `draw`. */
const arithmeticItems = (count: number, draw: (lo: number, hi: number) => number) =>
  Array.from({ length: count }, (_, i) => {
    const [op, apply] = OPERATIONS[i % OPERATIONS.length];
    const y = op === "*" ? draw(2, 9) : draw(2, 40);
    const x = op === "*" ? draw(2, 12) : y + draw(1, 60);
    return {
      topic: "arithmetic",
      prompt: `What is ${x} ${op} ${y}? Answer with the number only.`,
      check: "number",
      expected: String(apply(x, y)),
    };
  });
const arithmetic = arithmeticItems(12, pick);

const WORDS = [
  "apple",
  "river",
  "orange",
  "window",
  "silver",
  "garden",
  "pencil",
  "yellow",
  "rocket",
  "castle",
];
const copying = Array.from({ length: 8 }, (_, i) => {
  const phrase = [WORDS[i], WORDS[(i * 3 + 1) % WORDS.length], WORDS[(i * 7 + 2) % WORDS.length]].join(" ");
  return { topic: "copy", prompt: `Repeat exactly: ${phrase}`, check: "exact", expected: phrase };
});

const CAPITALS: [string, string][] = [
  ["France", "Paris"],
  ["Japan", "Tokyo"],
  ["Italy", "Rome"],
  ["Germany", "Berlin"],
  ["Spain", "Madrid"],
  ["Egypt", "Cairo"],
  ["Canada", "Ottawa"],
  ["Russia", "Moscow"],
  ["Greece", "Athens"],
  ["Kenya", "Nairobi"],
  ["Peru", "Lima"],
  ["Norway", "Oslo"],
];
const capitals = CAPITALS.map(([country, city]) => ({
  topic: "capital",
  prompt: `What is the capital of ${country}?`,
  check: "contains",
  expected: city,
}));

const UNITS: [string, string][] = [
  ["How many centimetres are in one metre?", "100"],
  ["How many grams are in one kilogram?", "1000"],
  ["How many minutes are in one hour?", "60"],
  ["How many seconds are in one minute?", "60"],
  ["How many hours are in one day?", "24"],
  ["How many days are in one week?", "7"],
  ["How many millimetres are in one centimetre?", "10"],
  ["How many metres are in one kilometre?", "1000"],
];
const units = UNITS.map(([prompt, expected]) => ({ topic: "unit", prompt, check: "number", expected }));

const INSTRUCTIONS: [string, string, string][] = [
  ["Reply with the word yes and nothing else.", "exact", "yes"],
  ["Reply with the word no and nothing else.", "exact", "no"],
  ["Write the word hello in capital letters, nothing else.", "exact", "HELLO"],
  ["What colour is the sky on a clear day? One word.", "contains", "blue"],
  ["What is the opposite of hot? One word.", "contains", "cold"],
  ["Which number comes after nine? Answer with the number only.", "number", "10"],
  ["Spell the word cat backwards, nothing else.", "exact", "tac"],
  ["What is the first letter of the English alphabet? One letter.", "exact", "a"],
];
const instructions = INSTRUCTIONS.map(([prompt, check, expected]) => ({
  topic: "instruction",
  prompt,
  check,
  expected,
}));

/** Rehearsal prompts: the slice's kinds with other numbers, words, countries, units and instructions. */
const REHEARSAL_WORDS = [
  "table",
  "cloud",
  "purple",
  "forest",
  "bottle",
  "planet",
  "guitar",
  "summer",
  "button",
];
const REHEARSAL_PROMPTS = [
  ...arithmeticItems(30, pickRehearsal).map((item) => item.prompt),
  ...Array.from(
    { length: 9 },
    (_, i) =>
      `Repeat exactly: ${[0, 3, 6].map((k) => REHEARSAL_WORDS[(2 * i + k) % REHEARSAL_WORDS.length]).join(" ")}`,
  ),
  ...["Portugal", "Sweden", "Poland", "Austria", "Ireland", "Mexico", "Brazil", "Argentina", "China", "India"]
    .concat(["Thailand", "Turkey", "Finland", "Denmark", "Belgium", "Chile"])
    .map((country) => `What is the capital of ${country}?`),
  "How many months are in one year?",
  "How many legs does a spider have?",
  "How many sides does a triangle have?",
  "How many days are in a leap year?",
  "How many centimetres are in two metres?",
  "How many minutes are in two hours?",
  "How many grams are in half a kilogram?",
  "How many wheels does a bicycle have?",
  "Reply with the word maybe and nothing else.",
  "Write the word water in capital letters, nothing else.",
  "What colour is grass? One word.",
  "What is the opposite of up? One word.",
  "Which number comes before five? Answer with the number only.",
  "Spell the word dog backwards, nothing else.",
  "What is the last letter of the English alphabet? One letter.",
  "Name a fruit that is yellow. One word.",
];

const items = [...arithmetic, ...copying, ...capitals, ...units, ...instructions].map((item, i) =>
  GeneralItem.parse({ id: `general-${item.topic}-${String(i).padStart(2, "0")}`, ...item }),
);
writeFileSync(OUT, `${items.map((item) => JSON.stringify(item)).join("\n")}\n`);
console.log(`wrote ${items.length} items to ${OUT.pathname}`);

const gated = new Set(items.map((item) => item.prompt));
const rehearsal = [...new Set(REHEARSAL_PROMPTS)].filter((prompt) => !gated.has(prompt));
writeFileSync(REHEARSAL_OUT, `${rehearsal.map((prompt) => JSON.stringify({ prompt })).join("\n")}\n`);
console.log(`wrote ${rehearsal.length} rehearsal prompts to ${REHEARSAL_OUT.pathname}`);
