import type { FailurePattern } from "@arc/core";
import { html } from "hono/html";
import type { ModelVersion } from "../store/model-registry.ts";
import type { DashboardApi } from "./dashboard-api.ts";
import type { Markup } from "./page-shell.ts";

/** Colours of model versions, given in the order the tenant registered them; `unversioned` is grey. */
const VERSION_COLOURS = [
  "#2471a3",
  "#c0392b",
  "#1e8449",
  "#b9770e",
  "#7d3c98",
  "#148f77",
  "#a04000",
  "#1a5276",
  "#922b21",
  "#6e2c00",
];
const UNVERSIONED_COLOUR = "#808b96";

/** The names a page shows for ids: model versions and patterns, each with one colour or link everywhere. */
export class Labels {
  private readonly versions: Map<string, ModelVersion>;
  private readonly order: Map<string, number>;
  private readonly patterns: Map<string, FailurePattern>;

  constructor(versions: ModelVersion[], patterns: FailurePattern[]) {
    const byAge = [...versions].sort(
      (a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id),
    );
    this.versions = new Map(byAge.map((v) => [v.id, v]));
    this.order = new Map(byAge.map((v, i) => [v.id, i]));
    this.patterns = new Map(patterns.map((p) => [p.id, p]));
  }

  /** The tenant's model versions and patterns, read once for a page. */
  static async load(api: DashboardApi): Promise<Labels> {
    const [versions, patterns] = await Promise.all([
      api.get<{ data: ModelVersion[] }>("/model-versions"),
      api.get<{ data: FailurePattern[] }>("/patterns?limit=1000"),
    ]);
    return new Labels(versions.data, patterns.data);
  }

  /** A model version's name (its id where the tenant has no such version: a served name or `unversioned`). */
  versionName(id: string | null | undefined): string {
    if (!id) return "–";
    return this.versions.get(id)?.name ?? id;
  }

  /**
   * A model version's colour, the same in every chart and table: by the order the tenant registered them; a name
   * the tenant has no version of (a hosted model's) by a hash of the name; `unversioned` grey.
   */
  versionColour(id: string): string {
    if (id === "unversioned") return UNVERSIONED_COLOUR;
    const i = this.order.get(id);
    if (i !== undefined) return VERSION_COLOURS[i % VERSION_COLOURS.length];
    let hash = 0;
    for (const c of id) hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
    return VERSION_COLOURS[(this.order.size + hash) % VERSION_COLOURS.length];
  }

  /** A model version as a link to its page, named, its id on hover, with its colour's swatch. */
  version(id: string | null | undefined): Markup {
    if (!id) return html`–`;
    const swatch = html`<svg class="swatch" width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="${this.versionColour(id)}"/></svg> `;
    if (!this.versions.has(id)) return html`${swatch}${id}`;
    return html`${swatch}<a href="/ui/models/${encodeURIComponent(id)}" title="${id}">${this.versionName(id)}</a>`;
  }

  /** A pattern's label (its id when unknown). */
  patternName(id: string): string {
    return this.patterns.get(id)?.label ?? id;
  }

  /** A pattern as a link to its page, labelled, its id on hover. */
  pattern(id: string | null | undefined): Markup {
    if (!id) return html`–`;
    return html`<a href="/ui/patterns/${encodeURIComponent(id)}" title="${id}">${this.patternName(id)}</a>`;
  }

  /** Every model version, oldest first. */
  allVersions(): ModelVersion[] {
    return [...this.versions.values()];
  }

  /** Every pattern, largest first. */
  allPatterns(): FailurePattern[] {
    return [...this.patterns.values()];
  }
}
