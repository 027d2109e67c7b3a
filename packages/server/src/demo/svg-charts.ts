/** One named series of (x, y) points. */
export interface Series {
  name: string;
  points: { x: number; y: number }[];
}

const COLORS = ["#c0392b", "#2471a3", "#1e8449", "#b9770e", "#7d3c98", "#566573"];
const W = 640;
const H = 260;
const M = { left: 52, right: 16, top: 16, bottom: 58 };

/** Escapes text for SVG/HTML. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function fmt(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
}

/** Width of `text` at font-size 12 in a sans-serif face, roughly (0.6 em a character). */
const textWidth = (text: string) => text.length * 7.2;

/** One row of swatches under the plot, each entry as wide as its name. */
function legend(names: string[]): string {
  let x = M.left;
  return names
    .map((name, i) => {
      const entry = `<g transform="translate(${x.toFixed(0)},${H - 18})"><rect width="12" height="12" fill="${COLORS[i % COLORS.length]}"/><text x="16" y="11" font-size="12">${esc(name)}</text></g>`;
      x += 16 + textWidth(name) + 18;
      return entry;
    })
    .join("");
}

function axes(xLabel: string, yLabel: string, yMin: number, yMax: number): string {
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const y = H - M.bottom - f * (H - M.top - M.bottom);
    return `<line x1="${M.left}" x2="${W - M.right}" y1="${y}" y2="${y}" stroke="#ddd"/><text x="${M.left - 6}" y="${y + 4}" font-size="11" text-anchor="end">${fmt(yMin + f * (yMax - yMin))}</text>`;
  });
  return [
    ...ticks,
    `<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${H - M.bottom}" stroke="#333"/>`,
    `<line x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}" stroke="#333"/>`,
    `<text x="${(M.left + W - M.right) / 2}" y="${H - M.bottom + 30}" font-size="12" text-anchor="middle">${esc(xLabel)}</text>`,
    `<text x="14" y="${(M.top + H - M.bottom) / 2}" font-size="12" text-anchor="middle" transform="rotate(-90 14 ${(M.top + H - M.bottom) / 2})">${esc(yLabel)}</text>`,
  ].join("");
}

/** A line chart of several series (markers at each point), self-contained SVG. */
export function lineChartSvg(options: {
  title: string;
  series: Series[];
  xLabel: string;
  yLabel: string;
  yMin?: number;
  yMax?: number;
}): string {
  const all = options.series.flatMap((s) => s.points);
  const xMin = Math.min(...all.map((p) => p.x), 0);
  const xMax = Math.max(...all.map((p) => p.x), xMin + 1);
  const yMin = options.yMin ?? Math.min(...all.map((p) => p.y), 0);
  const yMax = options.yMax ?? Math.max(...all.map((p) => p.y), yMin + 1e-9);
  const sx = (x: number) => M.left + ((x - xMin) / (xMax - xMin)) * (W - M.left - M.right);
  const sy = (y: number) => H - M.bottom - ((y - yMin) / (yMax - yMin || 1)) * (H - M.top - M.bottom);
  const lines = options.series.map((s, i) => {
    const color = COLORS[i % COLORS.length];
    const path = s.points
      .map((p, j) => `${j ? "L" : "M"}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`)
      .join("");
    const dots = s.points
      .map((p) => `<circle cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y).toFixed(1)}" r="2.5" fill="${color}"/>`)
      .join("");
    return `<path d="${path}" fill="none" stroke="${color}" stroke-width="2"/>${dots}`;
  });
  const xTicks = [0, 0.5, 1]
    .map((f) => {
      const x = xMin + f * (xMax - xMin);
      return `<text x="${sx(x)}" y="${H - M.bottom + 14}" font-size="11" text-anchor="middle">${fmt(x)}</text>`;
    })
    .join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(options.title)}"><title>${esc(options.title)}</title>${axes(options.xLabel, options.yLabel, yMin, yMax)}${xTicks}${lines.join("")}${legend(options.series.map((s) => s.name))}</svg>`;
}

/** A grouped bar chart: one group per category, one bar per series (values in [0, yMax]). */
export function barChartSvg(options: {
  title: string;
  categories: string[];
  series: { name: string; values: number[] }[];
  yLabel: string;
  yMax?: number;
}): string {
  const yMax = options.yMax ?? Math.max(1e-9, ...options.series.flatMap((s) => s.values));
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
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(options.title)}"><title>${esc(options.title)}</title>${axes("", options.yLabel, 0, yMax)}${bars.join("")}${legend(options.series.map((s) => s.name))}</svg>`;
}
