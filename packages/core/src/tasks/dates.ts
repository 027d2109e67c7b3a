const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

const MONTH_NAMES = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/** The year assumed when a date is written without one ("March 5"). */
export const DEFAULT_YEAR = 2026;

function iso(year: number, month: number, day: number): string | null {
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return null;
  }
  return `${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

function monthIndex(word: string): number {
  return MONTHS.indexOf(word.slice(0, 3).toLowerCase()) + 1;
}

/**
 * Reads a calendar date written the ways people and models write them ("2026-03-05", "2026/3/5",
 * "March 5, 2026", "Mar 5", "5 March", "03/05/2026" month first) and returns `YYYY-MM-DD`,
 * or null when the text is not a real date (e.g. February 30).
 */
export function parseDate(text: string, defaultYear = DEFAULT_YEAR): string | null {
  const t = text.trim().replace(/,/g, " ").replace(/\s+/g, " ");
  let m = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})$/.exec(t);
  if (m) return iso(Number(m[1]), Number(m[2]), Number(m[3]));
  m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(t);
  if (m) return iso(Number(m[3]), Number(m[1]), Number(m[2]));
  m = /^([A-Za-z]+)\.? (\d{1,2})(?:st|nd|rd|th)?(?: (\d{4}))?$/.exec(t);
  if (m && monthIndex(m[1]) > 0) return iso(Number(m[3] ?? defaultYear), monthIndex(m[1]), Number(m[2]));
  m = /^(\d{1,2})(?:st|nd|rd|th)? ([A-Za-z]+)\.?(?: (\d{4}))?$/.exec(t);
  if (m && monthIndex(m[2]) > 0) return iso(Number(m[3] ?? defaultYear), monthIndex(m[2]), Number(m[1]));
  return null;
}

/** The number (1-12) of a month written out in full ("March"), or null. */
export function monthNumber(name: string): number | null {
  const index = MONTH_NAMES.indexOf(name);
  return index < 0 ? null : index + 1;
}

/** Writes an ISO date the long way ("March 5"), as production users do. */
export function formatDateLong(isoDate: string): string {
  const [, month, day] = isoDate.split("-").map(Number);
  return `${MONTH_NAMES[month - 1]} ${day}`;
}

/** Reads a clock time ("19:00", "7pm", "7:30 pm", "7 PM") and returns `HH:MM`, or null. */
export function parseTime(text: string): string | null {
  const m = /^(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$/i.exec(text.trim());
  if (!m) return null;
  let hour = Number(m[1]);
  const minute = Number(m[2] ?? "0");
  const half = m[3]?.toLowerCase();
  if (!half && m[2] === undefined) return null;
  if (half) {
    if (hour < 1 || hour > 12) return null;
    hour = (hour % 12) + (half === "pm" ? 12 : 0);
  }
  if (hour > 23 || minute > 59) return null;
  return `${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}`;
}

/** Writes `HH:MM` on a 12-hour clock ("2pm", "9:30am"). */
export function formatTime12(time: string): string {
  const [hour, minute] = time.split(":").map(Number);
  const h = hour % 12 === 0 ? 12 : hour % 12;
  return `${h}${minute ? `:${String(minute).padStart(2, "0")}` : ""}${hour < 12 ? "am" : "pm"}`;
}
