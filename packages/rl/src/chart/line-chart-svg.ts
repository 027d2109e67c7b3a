/** One curve of a chart. */
export interface Series {
  name: string;
  points: readonly { x: number; y: number }[];
}

/** Options of `lineChartSvg`. */
export interface LineChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  width?: number;
  height?: number;
  /** Fixed y range (e.g. [0, 1] for rates); default: the data's range. */
  yRange?: [number, number];
}

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function ticks(min: number, max: number, count: number): number[] {
  if (max === min) return [min];
  return Array.from({ length: count + 1 }, (_, i) => min + ((max - min) * i) / count);
}

function label(v: number): string {
  const a = Math.abs(v);
  return a >= 100 || v === 0 ? v.toFixed(0) : a >= 1 ? v.toFixed(1) : v.toFixed(2);
}

/** A self-contained SVG line chart (axes, ticks, legend); no chart library. Non-finite points are skipped. */
export function lineChartSvg(series: readonly Series[], options: LineChartOptions): string {
  const width = options.width ?? 640;
  const height = options.height ?? 360;
  const m = { left: 56, right: 150, top: 32, bottom: 44 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const all = series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  const xMin = Math.min(0, ...all.map((p) => p.x));
  const xMax = Math.max(xMin + 1, ...all.map((p) => p.x));
  let [yMin, yMax] = options.yRange ?? [Math.min(...all.map((p) => p.y)), Math.max(...all.map((p) => p.y))];
  if (!Number.isFinite(yMin) || !Number.isFinite(yMax)) [yMin, yMax] = [0, 1];
  if (yMax === yMin) [yMin, yMax] = [yMin - 0.5, yMax + 0.5];
  const sx = (x: number) => m.left + ((x - xMin) / (xMax - xMin)) * plotW;
  const sy = (y: number) => m.top + plotH - ((y - yMin) / (yMax - yMin)) * plotH;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${m.left}" y="18" font-size="13" font-weight="bold">${escapeXml(options.title)}</text>`,
  ];
  for (const t of ticks(yMin, yMax, 5)) {
    parts.push(
      `<line x1="${m.left}" x2="${m.left + plotW}" y1="${sy(t).toFixed(1)}" y2="${sy(t).toFixed(1)}" stroke="#eee"/>`,
      `<text x="${m.left - 6}" y="${(sy(t) + 4).toFixed(1)}" text-anchor="end">${label(t)}</text>`,
    );
  }
  for (const t of ticks(xMin, xMax, 6)) {
    parts.push(
      `<text x="${sx(t).toFixed(1)}" y="${m.top + plotH + 16}" text-anchor="middle">${label(t)}</text>`,
    );
  }
  parts.push(
    `<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${m.top + plotH}" stroke="#333"/>`,
    `<line x1="${m.left}" x2="${m.left + plotW}" y1="${m.top + plotH}" y2="${m.top + plotH}" stroke="#333"/>`,
    `<text x="${m.left + plotW / 2}" y="${height - 8}" text-anchor="middle">${escapeXml(options.xLabel)}</text>`,
    `<text transform="translate(14 ${m.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(options.yLabel)}</text>`,
  );
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const pts = s.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
    if (pts.length > 0) {
      const d = pts
        .map((p, k) => `${k === 0 ? "M" : "L"}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`)
        .join(" ");
      parts.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="1.8"/>`);
      if (pts.length === 1)
        parts.push(`<circle cx="${sx(pts[0].x)}" cy="${sy(pts[0].y)}" r="3" fill="${color}"/>`);
    }
    const ly = m.top + 6 + i * 16;
    parts.push(
      `<line x1="${width - m.right + 12}" x2="${width - m.right + 30}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"/>`,
      `<text x="${width - m.right + 35}" y="${ly + 4}">${escapeXml(s.name)}</text>`,
    );
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
