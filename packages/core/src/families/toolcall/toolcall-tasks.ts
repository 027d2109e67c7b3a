import type { Task } from "../../rollout/index.ts";
import { formatDateLong, formatTime12, monthNumber, parseTime } from "../../tasks/dates.ts";
import { createRng, deriveSeed, type Rng } from "../../tasks/rng.ts";
import type { Split } from "../../tasks/split.ts";
import {
  checkGenerateOptions,
  drawInSplit,
  pickWeighted,
  type TaskGenerateOptions,
  taskId,
} from "../../tasks/task-family.ts";
import type { ToolCallJson } from "../../tasks/tool-spec.ts";

/** What a `toolcall` task expects: exactly this call (arguments compared after normalization). */
export type ToolcallSolution = ToolCallJson;

type Intent = "get_weather" | "add_event" | "book_table" | "convert_currency";

// Train values are many and varied so that SFT learns to copy a value from the request rather than
// memorize a short list; production's own values are under-covered in train (see TRAIN_PRODUCTION_VALUE_SHARE).
const TRAIN_CITIES = [
  "Paris",
  "London",
  "Berlin",
  "Madrid",
  "Rome",
  "Tokyo",
  "Oslo",
  "Lima",
  "Cairo",
  "Boston",
  "Dublin",
  "Vienna",
  "Prague",
  "Lisbon",
  "Seoul",
  "Dakar",
  "Accra",
  "Denver",
  "Austin",
  "Milan",
  "Porto",
  "Kyiv",
  "Riga",
  "Sofia",
  "Tunis",
  "Quebec",
  "Bogota",
  "Manila",
  "Jakarta",
  "Sydney",
  "Chicago",
  "Mexico City",
];
/** Production's own names; train draws them only TRAIN_PRODUCTION_VALUE_SHARE of the time. */
const PROD_CITIES = ["Reykjavik", "Nairobi", "Hanoi", "Quito", "Perth", "Zagreb", "São Paulo", "New Delhi"];
const TRAIN_TITLES = [
  "Sync",
  "Dentist",
  "Gym",
  "Lunch",
  "Standup",
  "Yoga",
  "Review",
  "Demo",
  "Dinner",
  "Haircut",
  "Piano",
  "Run",
  "Retro",
  "Interview",
  "Coffee",
  "Doctor",
];
const PROD_TITLES = ["Budget", "Call", "Flight", "Vet"];
const TRAIN_PLACES = [
  "Nobu",
  "Chez Marie",
  "Blue Fin",
  "Golden Wok",
  "Olive Tree",
  "Red Lion",
  "Le Petit",
  "Bamboo",
  "Green Leaf",
  "Mama Rosa",
  "Sushi Bar",
  "Oak Grill",
];
const PROD_PLACES = ["The Ivy", "Sakura House", "El Toro", "Casa Luna"];
const CODES = ["USD", "EUR", "GBP", "JPY", "CHF", "CAD"];
const CURRENCY_NAMES: Record<string, string> = {
  USD: "dollars",
  EUR: "euros",
  GBP: "pounds",
  JPY: "yen",
  CHF: "francs",
  CAD: "Canadian dollars",
};

/** Tool mix per split: production leans on booking, which train under-covers. */
const MIX: Record<Split, Record<Intent, number>> = {
  train: { get_weather: 0.35, add_event: 0.3, book_table: 0.1, convert_currency: 0.25 },
  eval: { get_weather: 0.35, add_event: 0.3, book_table: 0.1, convert_currency: 0.25 },
  production: { get_weather: 0.2, add_event: 0.25, book_table: 0.3, convert_currency: 0.25 },
};

interface Drawn {
  question: string;
  call: ToolCallJson;
  template: string;
}

function isoDate(rng: Rng): string {
  return `2026-${String(rng.int(1, 12)).padStart(2, "0")}-${String(rng.int(1, 28)).padStart(2, "0")}`;
}

/** Production phrases a third of its requests with a template (the third) that train shows only this rarely. */
const TRAIN_THIRD_TEMPLATE_SHARE = 0.08;
/**
 * Share of train requests that carry one of production's own names (cities, titles, places) or an amount
 * above train's usual 500; production draws them 70% of the time. A small model (the embedded base models)
 * does not learn to copy a name it has never seen, so a value train never showed would be a failure that no
 * amount of RL on sampled replies could fix; under-covered, it is a failure that training can fix.
 */
const TRAIN_PRODUCTION_VALUE_SHARE = 0.05;
/** Share of production requests that carry one of production's own names (the rest take a train name). */
const PRODUCTION_VALUE_SHARE = 0.7;

/** A name for a request: production leans on its own names, which train draws only rarely. */
function pickName(prod: boolean, rng: Rng, productionNames: string[], trainNames: string[]): string {
  const share = prod ? PRODUCTION_VALUE_SHARE : TRAIN_PRODUCTION_VALUE_SHARE;
  return rng.pick(rng.chance(share) ? productionNames : trainNames);
}

/** An amount: up to 2000 in production; train stays at or under 500 except for a rare larger one. */
function pickAmount(prod: boolean, rng: Rng): number {
  if (prod) return rng.int(1, 2000);
  return rng.chance(TRAIN_PRODUCTION_VALUE_SHARE) ? rng.int(501, 2000) : rng.int(1, 500);
}

function draw(intent: Intent, prod: boolean, rng: Rng): Drawn {
  const variant = prod ? rng.int(0, 2) : rng.chance(TRAIN_THIRD_TEMPLATE_SHARE) ? 2 : rng.int(0, 1);
  switch (intent) {
    case "get_weather": {
      const city = pickName(prod, rng, PROD_CITIES, TRAIN_CITIES);
      const unit = rng.pick(["c", "f"] as const);
      const word = unit === "c" ? "celsius" : "fahrenheit";
      const question = [
        `What's the weather in ${city} in ${word}?`,
        `Weather in ${city}, ${word} please.`,
        `Is it hot in ${city} today? Answer in °${unit.toUpperCase()}.`,
      ][variant];
      return { question, call: { tool: intent, args: { city, unit } }, template: `weather${variant}` };
    }
    case "add_event": {
      const title = pickName(prod, rng, PROD_TITLES, TRAIN_TITLES);
      const date = isoDate(rng);
      const time = `${String(rng.int(7, 20)).padStart(2, "0")}:${rng.pick(["00", "30"])}`;
      const question = [
        `Add ${title} to my calendar on ${date} at ${time}.`,
        `Schedule ${title} on ${date} at ${time}.`,
        `Put ${title} in my calendar for ${formatDateLong(date)} at ${formatTime12(time)}.`,
      ][variant];
      return { question, call: { tool: intent, args: { title, date, time } }, template: `event${variant}` };
    }
    case "book_table": {
      const restaurant = pickName(prod, rng, PROD_PLACES, TRAIN_PLACES);
      const date = isoDate(rng);
      const people = rng.int(1, 8);
      const question = [
        `Book a table for ${people} at ${restaurant} on ${date}.`,
        `Reserve ${restaurant} for ${people} on ${date}.`,
        `Table for ${people} at ${restaurant}, ${formatDateLong(date)} please.`,
      ][variant];
      return {
        question,
        call: { tool: intent, args: { people, place: restaurant, date } },
        template: `book${variant}`,
      };
    }
    case "convert_currency": {
      const from = rng.pick(CODES);
      const to = rng.pick(CODES.filter((c) => c !== from));
      const amount = pickAmount(prod, rng);
      const question = [
        `Convert ${amount} ${from} to ${to}.`,
        `How much is ${amount} ${from} in ${to}?`,
        `How many ${CURRENCY_NAMES[to]} is ${amount} ${CURRENCY_NAMES[from]}?`,
      ][variant];
      return { question, call: { tool: intent, args: { amount, from, to } }, template: `fx${variant}` };
    }
  }
}

/** Generates `toolcall` tasks: a short request in natural language → one JSON tool call. */
export function generateToolcallTasks(options: TaskGenerateOptions): Task[] {
  checkGenerateOptions(options);
  const rng = createRng(deriveSeed(options.seed, `toolcall:${options.split}`));
  const prod = options.split === "production";
  return Array.from({ length: options.count }, (_, i) => {
    const intent = pickWeighted(MIX[options.split], rng.next());
    const drawn = drawInSplit(options.split, () => draw(intent, prod, rng));
    return {
      id: taskId("toolcall", options.split, options.seed, i),
      env: "toolcall",
      question: drawn.question,
      solution: drawn.call satisfies ToolcallSolution,
      meta: { split: options.split, tool: intent, template: drawn.template },
    };
  });
}

/** One conversion a `toolcall` request leaves to the reader: which part of a value, and the fact that states it. */
interface Conversion {
  part: "month" | "hour";
  fact: string;
}

function conversionsOf(task: Task): Conversion[] {
  const { tool, args } = task.solution as ToolcallSolution;
  const found: Conversion[] = [];
  const date = String(args.date);
  if ((tool === "add_event" || tool === "book_table") && !task.question.includes(date)) {
    found.push({ part: "month", fact: `${formatDateLong(date).split(" ")[0]} is month ${date.slice(5, 7)}` });
  }
  const time = String(args.time);
  if (tool === "add_event" && !task.question.includes(time)) {
    found.push({ part: "hour", fact: `${formatTime12(time)} is hour ${time.slice(0, 2)}` });
  }
  return found;
}

/**
 * The conversions a `toolcall` request leaves to the reader, each a part of an argument value and never
 * a whole one: the month's number of a date written in words ("March is month 03") and the 24-hour
 * hour of a 12-hour time ("3pm is hour 15"). A teacher may say these without writing the call
 * (adaptive teaching). A value whose call form the request already contains ("11:30" in "11:30am")
 * needs none; empty when the request writes its dates and times as the call does.
 */
export function toolcallConversions(task: Task): string[] {
  return conversionsOf(task).map((c) => c.fact);
}

/**
 * The kind of conversions a `toolcall` request needs, its tool and the parts converted (`book_table:month`,
 * `add_event:month+hour`), so that requests alike can be told alike; null when it needs none.
 */
export function toolcallConversionKind(task: Task): string | null {
  const parts = conversionsOf(task).map((c) => c.part);
  return parts.length === 0 ? null : `${(task.solution as ToolcallSolution).tool}:${parts.join("+")}`;
}

/** A conversion fact as a teaching states it: `March is month 03`, `3pm is hour 15`. */
const CONVERSION_CLAIM = /\b([A-Z][a-z]+) is month (\d\d)\b|\b(\d{1,2}(?::\d\d)?[ap]m) is hour (\d\d)\b/g;

/** The conversion facts a teaching states (`March is month 03`, `3pm is hour 15`), in order. */
export function toolcallConversionClaims(teaching: string): string[] {
  return teaching.match(CONVERSION_CLAIM) ?? [];
}

/**
 * The conversion facts a teaching states (`March is month 03`, `3pm is hour 15`) that the request itself does not
 * support: a month or 12-hour time the request does not mention, or a number that is not its conversion. It needs only
 * the request's text, so a run-time guard can drop such claims before a student reads them (`ungroundedClaims` of
 * `runTeaching`).
 */
export function ungroundedToolcallConversions(question: string, teaching: string): string[] {
  const mentions = (word: string) => new RegExp(`(?<![A-Za-z0-9:])${word}(?![A-Za-z0-9])`).test(question);
  const ungrounded: string[] = [];
  for (const [claim, month, number, time12, hour] of teaching.matchAll(CONVERSION_CLAIM)) {
    const grounded =
      month !== undefined
        ? monthNumber(month) === Number(number) && mentions(month)
        : parseTime(time12)?.slice(0, 2) === hour && mentions(time12);
    if (!grounded) ungrounded.push(claim);
  }
  return ungrounded;
}
