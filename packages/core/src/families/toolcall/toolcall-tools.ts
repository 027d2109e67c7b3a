import { parseDate, parseTime } from "../../tasks/dates.ts";
import { fnv1a } from "../../tasks/rng.ts";
import type { ToolSpec } from "../../tasks/tool-spec.ts";

const SKIES = ["sunny", "cloudy", "rain", "snow", "windy"];

/** Units per US dollar; fixed so conversions are reproducible. */
export const CURRENCY_RATES: Readonly<Record<string, number>> = {
  USD: 1,
  EUR: 0.9,
  GBP: 0.8,
  JPY: 150,
  CHF: 0.88,
  CAD: 1.35,
  AUD: 1.5,
  INR: 83,
};

function key(text: unknown): string {
  return String(text).trim().toLowerCase().replace(/\s+/g, " ");
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** `get_weather`: the temperature and sky of a city, derived from the city's name. */
export const getWeather: ToolSpec = {
  name: "get_weather",
  description: "Current weather of a city",
  parameters: {
    type: "object",
    properties: {
      city: { type: "string", minLength: 1, description: "city name" },
      unit: { type: "string", enum: ["c", "f"], description: "c for celsius, f for fahrenheit" },
    },
    required: ["city", "unit"],
    additionalProperties: false,
  },
  execute(args) {
    const h = fnv1a(key(args.city));
    const celsius = (h % 40) - 5;
    const temp = args.unit === "f" ? Math.round((celsius * 9) / 5 + 32) : celsius;
    return { ok: true, value: { city: key(args.city), temp, unit: args.unit, sky: SKIES[(h >>> 8) % 5] } };
  },
};

/** `add_event`: puts an event in the calendar; fails on a date or time that does not exist. */
export const addEvent: ToolSpec = {
  name: "add_event",
  description: "Create a calendar event",
  parameters: {
    type: "object",
    properties: {
      title: { type: "string", minLength: 1 },
      date: { type: "string", minLength: 1, description: "YYYY-MM-DD" },
      time: { type: "string", minLength: 1, description: "HH:MM, 24-hour" },
    },
    required: ["title", "date", "time"],
    additionalProperties: false,
  },
  execute(args) {
    const date = parseDate(String(args.date));
    if (!date) return { ok: false, error: `invalid date ${JSON.stringify(args.date)}` };
    const time = parseTime(String(args.time));
    if (!time) return { ok: false, error: `invalid time ${JSON.stringify(args.time)}` };
    const id = fnv1a(`${key(args.title)}|${date}|${time}`).toString(36);
    return { ok: true, value: { event_id: `ev_${id}`, title: key(args.title), date, time } };
  },
};

/** `book_table`: reserves a restaurant table; parties above 12 cannot be seated. */
export const bookTable: ToolSpec = {
  name: "book_table",
  description: "Book a restaurant table",
  parameters: {
    type: "object",
    properties: {
      people: { type: "integer", minimum: 1, maximum: 20 },
      place: { type: "string", minLength: 1, description: "restaurant name" },
      date: { type: "string", minLength: 1, description: "YYYY-MM-DD" },
    },
    required: ["people", "place", "date"],
    additionalProperties: false,
  },
  execute(args) {
    const date = parseDate(String(args.date));
    if (!date) return { ok: false, error: `invalid date ${JSON.stringify(args.date)}` };
    if (Number(args.people) > 12) return { ok: false, error: "no table for more than 12 people" };
    const id = fnv1a(`${key(args.place)}|${date}|${args.people}`).toString(36);
    return { ok: true, value: { booking_id: `bk_${id}`, place: key(args.place), date, people: args.people } };
  },
};

/** `convert_currency`: converts an amount at fixed rates; fails on a currency it does not know. */
export const convertCurrency: ToolSpec = {
  name: "convert_currency",
  description: "Convert an amount between currencies",
  parameters: {
    type: "object",
    properties: {
      amount: { type: "number", minimum: 0 },
      from: { type: "string", pattern: "^[A-Za-z]{3}$", description: "ISO 4217 code" },
      to: { type: "string", pattern: "^[A-Za-z]{3}$", description: "ISO 4217 code" },
    },
    required: ["amount", "from", "to"],
    additionalProperties: false,
  },
  execute(args) {
    const from = String(args.from).toUpperCase();
    const to = String(args.to).toUpperCase();
    for (const code of [from, to]) {
      if (!(code in CURRENCY_RATES)) return { ok: false, error: `unsupported currency ${code}` };
    }
    const amount = round2((Number(args.amount) / CURRENCY_RATES[from]) * CURRENCY_RATES[to]);
    return { ok: true, value: { amount, currency: to } };
  },
};

/** The four tools of the `toolcall` family. */
export const TOOLCALL_TOOLS: readonly ToolSpec[] = [getWeather, addEvent, bookTable, convertCurrency];
