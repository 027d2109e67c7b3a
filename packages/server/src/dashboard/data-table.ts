import { html } from "hono/html";
import type { Markup } from "./page-shell.ts";

/** Longest text a cell shows; longer text is cut with an ellipsis (the whole text on hover). */
const CELL_CHARS = 240;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A key as words: `sourceTraceCount` → `source trace count`, `held_out` → `held out`. */
export function words(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replaceAll("_", " ")
    .toLowerCase();
}

/** A value in one cell: a number or text as it is (long text cut), a list joined, a chat message as role: text. */
function cell(value: unknown): Markup {
  if (value === null || value === undefined || value === "") return html`–`;
  if (typeof value === "number")
    return html`${Number.isInteger(value) ? value.toLocaleString("en-US") : Number(value.toFixed(4))}`;
  if (typeof value === "string")
    return value.length > CELL_CHARS
      ? html`<span title="${value}">${value.slice(0, CELL_CHARS)}…</span>`
      : html`${value}`;
  if (typeof value === "boolean") return html`${value ? "yes" : "no"}`;
  if (Array.isArray(value)) {
    if (value.every((v) => isRecord(v) && typeof v.role === "string"))
      return html`${value.map((m) => html`<div><strong>${String(m.role)}</strong>: ${cell(typeof m.content === "string" ? m.content : (m.content ?? m.tool_calls))}</div>`)}`;
    if (value.every((v) => !isRecord(v) && !Array.isArray(v))) return cell(value.map(String).join(", "));
    return dataTable(value);
  }
  if (isRecord(value)) return dataTable(value);
  return html`${String(value)}`;
}

/**
 * Any JSON value as tables a person reads, in place of a JSON dump: a record as rows of field and value (nested
 * records as nested tables), a list of records as a table with a column per field.
 */
export function dataTable(value: unknown): Markup {
  if (Array.isArray(value) && value.length > 0 && value.every(isRecord)) {
    const columns = [...new Set(value.flatMap((row) => Object.keys(row)))];
    return html`<table class="data"><thead><tr>${columns.map((c) => html`<th>${words(c)}</th>`)}</tr></thead><tbody>${value.map(
      (row) => html`<tr>${columns.map((c) => html`<td>${cell(row[c])}</td>`)}</tr>`,
    )}</tbody></table>`;
  }
  if (isRecord(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) return html`<span class="muted">none</span>`;
    return html`<table class="data"><tbody>${entries.map(
      ([key, v]) => html`<tr><th scope="row">${words(key)}</th><td>${cell(v)}</td></tr>`,
    )}</tbody></table>`;
  }
  return cell(value);
}
