import { esc } from "@arc/rl";

/** A node of the lineage graph: one record, in the column of its kind, linking to its page. */
export interface LineageNode {
  id: string;
  kind: "pattern" | "dataset" | "run" | "model" | "deployment";
  label: string;
  href: string;
}

/** An edge from what a record came from to the record. */
export interface LineageEdge {
  from: string;
  to: string;
}

const columns: LineageNode["kind"][] = ["pattern", "dataset", "run", "model", "deployment"];
const headings = ["Patterns", "Datasets", "Runs", "Model versions", "Deployments"];
const colW = 210;
const rowH = 34;
const nodeW = 180;
const nodeH = 24;
const top = 30;

/**
 * The lineage from failure patterns through datasets and runs to model versions and their deployments, as a
 * self-contained SVG: one column per kind, each node a link, each edge a curve from source to product (a model's
 * parent model too). Nodes of an edge that names an unknown node are skipped.
 */
export function lineageGraphSvg(nodes: LineageNode[], edges: LineageEdge[]): string {
  const place = new Map<string, { x: number; y: number }>();
  let rows = 1;
  columns.forEach((kind, c) => {
    const inColumn = nodes.filter((n) => n.kind === kind);
    rows = Math.max(rows, inColumn.length);
    inColumn.forEach((n, r) => {
      place.set(n.id, { x: 10 + c * colW, y: top + r * rowH });
    });
  });
  const width = 10 + columns.length * colW;
  const height = top + rows * rowH + 10;
  const curves = edges.flatMap((e) => {
    const a = place.get(e.from);
    const b = place.get(e.to);
    if (!a || !b) return [];
    if (a.x === b.x) {
      // a model trained from another model: a loop on the column's right side
      const x = a.x + nodeW;
      const [y1, y2] = [a.y + nodeH / 2, b.y + nodeH / 2];
      return [
        `<path d="M${x},${y1} C${x + 24},${y1} ${x + 24},${y2} ${x},${y2}" fill="none" stroke="#7f8c8d" marker-end="url(#arrow)"/>`,
      ];
    }
    const [x1, y1, x2, y2] = [a.x + nodeW, a.y + nodeH / 2, b.x, b.y + nodeH / 2];
    const mid = (x1 + x2) / 2;
    return [
      `<path d="M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}" fill="none" stroke="#7f8c8d" marker-end="url(#arrow)"/>`,
    ];
  });
  const boxes = nodes.flatMap((n) => {
    const p = place.get(n.id);
    if (!p) return [];
    const text = n.label.length > 26 ? `${n.label.slice(0, 25)}…` : n.label;
    return [
      `<a href="${esc(n.href)}" aria-label="${esc(`${n.kind} ${n.label}`)}"><title>${esc(`${n.label} (${n.id})`)}</title><rect x="${p.x}" y="${p.y}" width="${nodeW}" height="${nodeH}" rx="4" fill="#eaf2f8" stroke="#1a5276"/><text x="${p.x + 8}" y="${p.y + 16}" font-size="12">${esc(text)}</text></a>`,
    ];
  });
  const heads = headings.map(
    (h, c) => `<text x="${10 + c * colW}" y="18" font-size="12" font-weight="600" fill="#5d6d7e">${h}</text>`,
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="Lineage from patterns to deployments"><title>Lineage from patterns to deployments</title><defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#7f8c8d"/></marker></defs>${heads.join("")}${curves.join("")}${boxes.join("")}</svg>`;
}
