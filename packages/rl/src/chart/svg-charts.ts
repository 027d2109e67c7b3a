/** One named series of (x, y) points. */
export interface Series {
  name: string;
  points: { x: number; y: number }[];
  /** Its colour (a CSS colour), so one thing keeps one colour across charts; by position when absent. */
  color?: string;
}

const COLORS = ["#c0392b", "#2471a3", "#1e8449", "#b9770e", "#7d3c98", "#566573"];
const W = 640;
const H = 260;
const M = { left: 52, right: 16, top: 16, bottom: 58 };

/** Escapes text for SVG/HTML. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Width of `text` at font-size 12 in a sans-serif face, roughly (0.6 em a character). */
const textWidth = (text: string) => text.length * 7.2;

/**
 * Round tick values from `min` to just above `max`: a step of 1, 2, 2.5 or 5 times a power of ten giving about
 * `count` intervals (at least 1 when `integers`), the last tick the first multiple of the step at or above `max`.
 */
export function niceTicks(min: number, max: number, count = 5, integers = false): number[] {
  const span = max > min ? max - min : Math.abs(max) || 1;
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  let step = ([1, 2, 2.5, 5, 10].find((m) => m * power >= raw) ?? 10) * power;
  if (integers) step = Math.max(1, Math.round(step));
  const first = Math.floor(min / step + 1e-9) * step;
  const last = Math.max(first + step, Math.ceil(max / step - 1e-9) * step);
  const ticks: number[] = [];
  for (let i = 0; first + i * step <= last + step * 1e-9; i++)
    ticks.push(Number((first + i * step).toPrecision(12)));
  return ticks;
}

/** A tick label with as many decimals as the step between ticks needs (none for whole steps). */
function tickLabel(value: number, step: number): string {
  let decimals = 0;
  while (decimals < 6 && Math.abs(step * 10 ** decimals - Math.round(step * 10 ** decimals)) > 1e-9)
    decimals++;
  return value.toFixed(decimals);
}

/** A value for a tooltip: two decimals below 10, fewer above. */
function fmt(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
}

/** One row of swatches under the plot, each entry as wide as its name. */
function legend(names: string[], colors: (string | undefined)[] = []): string {
  let x = M.left;
  return names
    .map((name, i) => {
      const entry = `<g transform="translate(${x.toFixed(0)},${H - 18})"><rect width="12" height="12" fill="${colors[i] ?? COLORS[i % COLORS.length]}"/><text x="16" y="11" font-size="12">${esc(name)}</text></g>`;
      x += 16 + textWidth(name) + 18;
      return entry;
    })
    .join("");
}

/** The y axis with a grid line and a label (class `y-tick`) at each tick, the x axis, and both axis titles. */
function axes(xLabel: string, yLabel: string, yTicks: number[]): string {
  const [yMin, yMax] = [yTicks[0], yTicks[yTicks.length - 1]];
  const step = yTicks.length > 1 ? yTicks[1] - yTicks[0] : 1;
  const ticks = yTicks.map((v) => {
    const y = H - M.bottom - ((v - yMin) / (yMax - yMin || 1)) * (H - M.top - M.bottom);
    return `<line x1="${M.left}" x2="${W - M.right}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="#ddd"/><text class="y-tick" x="${M.left - 6}" y="${(y + 4).toFixed(1)}" font-size="11" text-anchor="end">${tickLabel(v, step)}</text>`;
  });
  return [
    ...ticks,
    `<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${H - M.bottom}" stroke="#333"/>`,
    `<line x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}" stroke="#333"/>`,
    `<text x="${(M.left + W - M.right) / 2}" y="${H - M.bottom + 30}" font-size="12" text-anchor="middle">${esc(xLabel)}</text>`,
    `<text x="14" y="${(M.top + H - M.bottom) / 2}" font-size="12" text-anchor="middle" transform="rotate(-90 14 ${(M.top + H - M.bottom) / 2})">${esc(yLabel)}</text>`,
  ].join("");
}

/**
 * A line chart of several series of one measure (markers at each point), self-contained SVG. The y axis runs from
 * `yMin` (default: the data's least value or 0) to the nice tick just above the data; `xIntegers` labels the x axis
 * with whole numbers only (step counts); `xDomain` fixes the x axis to a window whatever the data spans, from its
 * first value at the left to its second at the right (`[24, 0]` for hours before now).
 */
export function lineChartSvg(options: {
  title: string;
  series: Series[];
  xLabel: string;
  yLabel: string;
  yMin?: number;
  xIntegers?: boolean;
  xDomain?: [number, number];
  /** The x values to label, in place of round ones (e.g. every 6 hours of a day). */
  xTickValues?: number[];
}): string {
  // a non-finite point (a NaN loss) is left out rather than written into the path
  const series = options.series.map((s) => ({
    ...s,
    points: s.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y)),
  }));
  const all = series.flatMap((s) => s.points);
  const yTicks = niceTicks(
    options.yMin ?? Math.min(...all.map((p) => p.y), 0),
    Math.max(...all.map((p) => p.y), options.yMin ?? 0),
  );
  const domain = options.xDomain && [...options.xDomain].sort((a, b) => a - b);
  const xTicks = niceTicks(
    domain?.[0] ?? Math.min(...all.map((p) => p.x), 0),
    domain?.[1] ?? Math.max(...all.map((p) => p.x), 1),
    6,
    options.xIntegers,
  );
  const [xMin, xMax] = options.xDomain ?? [xTicks[0], xTicks[xTicks.length - 1]];
  const [yMin, yMax] = [yTicks[0], yTicks[yTicks.length - 1]];
  const sx = (x: number) => M.left + ((x - xMin) / (xMax - xMin || 1)) * (W - M.left - M.right);
  const sy = (y: number) => H - M.bottom - ((y - yMin) / (yMax - yMin || 1)) * (H - M.top - M.bottom);
  const lines = series.map((s, i) => {
    const color = s.color ?? COLORS[i % COLORS.length];
    const path = s.points
      .map((p, j) => `${j ? "L" : "M"}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`)
      .join("");
    const dots = s.points
      .map((p) => `<circle cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y).toFixed(1)}" r="2.5" fill="${color}"/>`)
      .join("");
    return `<path d="${path}" fill="none" stroke="${color}" stroke-width="2"/>${dots}`;
  });
  const shownXTicks = options.xTickValues ?? xTicks;
  const xStep = shownXTicks.length > 1 ? Math.abs(shownXTicks[1] - shownXTicks[0]) : 1;
  const xLabels = shownXTicks
    .filter((x) => !domain || (x >= domain[0] - 1e-9 && x <= domain[1] + 1e-9))
    .map(
      (x) =>
        `<text class="x-tick" x="${sx(x).toFixed(1)}" y="${H - M.bottom + 14}" font-size="11" text-anchor="middle">${tickLabel(x, xStep)}</text>`,
    )
    .join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(options.title)}"><title>${esc(options.title)}</title>${axes(options.xLabel, options.yLabel, yTicks)}${xLabels}${lines.join("")}${legend(
    series.map((s) => s.name),
    series.map((s) => s.color),
  )}</svg>`;
}

/** A grouped bar chart: one group per category, one bar per series (values ≥ 0, the y axis fitted to the largest). */
export function barChartSvg(options: {
  title: string;
  categories: string[];
  series: { name: string; values: number[] }[];
  yLabel: string;
}): string {
  const yTicks = niceTicks(0, Math.max(0, ...options.series.flatMap((s) => s.values)));
  const yMax = yTicks[yTicks.length - 1];
  const groupW = (W - M.left - M.right) / Math.max(1, options.categories.length);
  const barW = (groupW * 0.8) / Math.max(1, options.series.length);
  const bars = options.categories.flatMap((cat, ci) => {
    const x0 = M.left + ci * groupW + groupW * 0.1;
    const label = `<text x="${x0 + groupW * 0.4}" y="${H - M.bottom + 14}" font-size="10" text-anchor="middle">${esc(cat.length > 18 ? `${cat.slice(0, 17)}…` : cat)}</text>`;
    return [
      label,
      ...options.series.map((s, si) => {
        const v = s.values[ci] ?? 0;
        const h = (v / yMax) * (H - M.top - M.bottom);
        return `<rect x="${(x0 + si * barW).toFixed(1)}" y="${(H - M.bottom - h).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="${COLORS[si % COLORS.length]}"><title>${esc(`${cat} · ${s.name}: ${fmt(v)}`)}</title></rect>`;
      }),
    ];
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(options.title)}"><title>${esc(options.title)}</title>${axes("", options.yLabel, yTicks)}${bars.join("")}${legend(options.series.map((s) => s.name))}</svg>`;
}
