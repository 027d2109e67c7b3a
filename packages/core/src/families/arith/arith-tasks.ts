import type { Task } from "../../rollout/index.ts";
import { createRng, deriveSeed, type Rng } from "../../tasks/rng.ts";
import {
  checkGenerateOptions,
  drawInSplit,
  type TaskGenerateOptions,
  taskId,
} from "../../tasks/task-family.ts";

/** What an `arith` task expects: the number, and one expression that computes it (the reference call). */
export interface ArithSolution {
  answer: number;
  expr: string;
}

const NAMES = ["Ann", "Bob", "Mia", "Leo", "Zoe", "Sam", "Ivy", "Max"];
const ITEMS = ["apple", "pen", "card", "book", "egg", "shell", "coin", "sticker"];

type Op = "add" | "sub" | "mul" | "div" | "mix";

/**
 * Share of train and eval problems drawn with production's numbers (up to 400, where train's stay at or under
 * 20). A small model does not learn to copy a three-digit number it has never seen, so numbers train never showed
 * would be failures no RL on sampled replies could fix; under-covered, they are failures training can fix. At 10%
 * the `small` base model still miscopied nine in ten of production's problems (3,600 SFT steps: production failure
 * 0.90, eval-split accuracy 0.91), outside the 30-60% a base model should fail.
 */
const TRAIN_PRODUCTION_NUMBERS_SHARE = 0.3;
/** Production asks half its problems in a second phrasing that train and eval use only this rarely. */
const TRAIN_SECOND_PHRASING_SHARE = 0.08;

function draw(
  op: Op,
  prod: boolean,
  rng: Rng,
): { question: string; expr: string; answer: number; phrasing: number } {
  const big = prod || rng.chance(TRAIN_PRODUCTION_NUMBERS_SHARE);
  const name = rng.pick(NAMES);
  const item = rng.pick(ITEMS);
  const a = rng.int(2, big ? 400 : 20);
  const b = rng.int(2, big ? 60 : 12);
  const v = prod ? rng.int(0, 1) : rng.chance(TRAIN_SECOND_PHRASING_SHARE) ? 1 : 0;
  switch (op) {
    case "add":
      return {
        question: [
          `${name} has ${a} ${item}s and gets ${b} more. How many ${item}s now?`,
          `What is the total of ${a} ${item}s plus ${b} ${item}s?`,
        ][v],
        expr: `${a}+${b}`,
        answer: a + b,
        phrasing: v,
      };
    case "sub": {
      const total = a + b;
      return {
        question: [
          `${name} had ${total} ${item}s and gave away ${b}. How many are left?`,
          `${total} ${item}s, ${b} lost. How many remain?`,
        ][v],
        expr: `${total}-${b}`,
        answer: a,
        phrasing: v,
      };
    }
    case "mul":
      return {
        question: [
          `${a} boxes hold ${b} ${item}s each. How many ${item}s in all?`,
          `${name} buys ${a} packs of ${b} ${item}s. Total ${item}s?`,
        ][v],
        expr: `${a}*${b}`,
        answer: a * b,
        phrasing: v,
      };
    case "div":
      return {
        question: [
          `${a * b} ${item}s are shared equally by ${b} kids. How many each?`,
          `Split ${a * b} ${item}s into ${b} equal groups. Size of each?`,
        ][v],
        expr: `${a * b}/${b}`,
        answer: a,
        phrasing: v,
      };
    case "mix": {
      const c = rng.int(1, big ? 99 : 9);
      return {
        question: [
          `${name} buys ${a} packs of ${b} ${item}s and ${c} loose ones. How many ${item}s?`,
          `${a} rows of ${b} ${item}s plus ${c} extra. How many ${item}s?`,
        ][v],
        expr: `${a}*${b}+${c}`,
        answer: a * b + c,
        phrasing: v,
      };
    }
  }
}

/** Generates `arith` tasks: a word problem → a calculator call (`{"tool":"calc","args":{"expr":"3*4+2"}}`). Production has bigger numbers and a second phrasing, which train shows rarely, and more two-step problems. */
export function generateArithTasks(options: TaskGenerateOptions): Task[] {
  checkGenerateOptions(options);
  const rng = createRng(deriveSeed(options.seed, `arith:${options.split}`));
  const prod = options.split === "production";
  const ops: Op[] = prod ? ["add", "sub", "mul", "div", "mix", "mix"] : ["add", "sub", "mul", "div", "mix"];
  return Array.from({ length: options.count }, (_, i) => {
    const op = rng.pick(ops);
    const { question, expr, answer, phrasing } = drawInSplit(options.split, () => draw(op, prod, rng));
    return {
      id: taskId("arith", options.split, options.seed, i),
      env: "arith",
      question,
      solution: { answer, expr } satisfies ArithSolution,
      meta: { split: options.split, op, phrasing },
    };
  });
}
