import { barChartSvg, lineChartSvg, type Series } from "@arc/rl";
import { html, raw } from "hono/html";
import type { Markup } from "./page-shell.ts";

/** A line chart of `series`, or a sentence saying there is nothing to draw yet. */
export function lineChart(options: Parameters<typeof lineChartSvg>[0] & { empty: string }): Markup {
  const drawn = options.series.filter((s) => s.points.length > 0);
  if (drawn.length === 0) return html`<p class="muted">${options.empty}</p>`;
  return html`<figure>${raw(lineChartSvg({ ...options, series: drawn }))}</figure>`;
}

/** A grouped bar chart, or a sentence saying there is nothing to draw yet. */
export function barChart(options: Parameters<typeof barChartSvg>[0] & { empty: string }): Markup {
  if (options.categories.length === 0) return html`<p class="muted">${options.empty}</p>`;
  return html`<figure>${raw(barChartSvg(options))}</figure>`;
}

export type { Series };
