import type { FailureClass } from "../detect/index.ts";
import { InvalidInputError } from "../errors/index.ts";
import { fnv1a } from "../tasks/rng.ts";
import type { FailurePattern } from "./failure-pattern.ts";
import type { FailureRecord } from "./failure-record.ts";
import { textTerms } from "./text-terms.ts";

/** How the clusterer groups; stored with its state so a restored clusterer behaves the same. */
export interface ClustererOptions {
  /**
   * Classes whose cause lies in the request, so the request text splits them into topics (refusing currency
   * questions is another mode than refusing weather ones). Other classes group by class, path and signature only.
   */
  textSplitClasses: FailureClass[];
  /** Cosine similarity (TF-IDF) to a pattern's text centroid below which a text-split failure starts a new pattern. */
  textSimilarity: number;
  /** Examples kept per pattern (the first ones seen). */
  maxExamples: number;
  /** Terms kept per pattern centroid; the rarest are pruned beyond it. */
  maxTerms: number;
}

/** Defaults: only refusals split by topic; 0.1 similarity; 5 examples; 200 terms. */
export const DEFAULT_CLUSTERER_OPTIONS: ClustererOptions = {
  textSplitClasses: ["refusal"],
  textSimilarity: 0.1,
  maxExamples: 5,
  maxTerms: 200,
};

/** The whole clusterer as JSON: what the server persists per tenant and restores with `FailureClusterer.fromJSON`. */
export interface ClusterState {
  format: "arc.cluster-state/1";
  tenantId: string;
  options: ClustererOptions;
  /** Failures seen (the N of IDF). */
  docs: number;
  /** Failures whose text contained each term (the df of IDF). */
  df: Record<string, number>;
  patterns: FailurePattern[];
  /** Request-term counts of each pattern's members, by pattern id. */
  centroids: Record<string, Record<string, number>>;
}

/** Where a failure went. */
export interface Assignment {
  patternId: string;
  /** True when this failure started the pattern. */
  created: boolean;
}

const MAX_DF_TERMS = 50_000;

/**
 * Groups failures into FailurePatterns online, for one tenant. A failure's key (class, tool/schema path, error
 * signature) picks the candidate patterns; for text-split classes the request's TF-IDF similarity to each
 * candidate's centroid picks one, or starts a new pattern when none is close. Ids never change once given.
 * Cost per failure: one tokenization and a few sparse dot products (microseconds).
 */
export class FailureClusterer {
  private readonly state: ClusterState;
  private readonly byKey = new Map<string, FailurePattern[]>();
  private readonly byId = new Map<string, FailurePattern>();
  /** Number of keys in `state.df`, kept so assignment never counts them. */
  private dfSize = 0;

  constructor(tenantId: string, options: Partial<ClustererOptions> = {}) {
    if (!tenantId)
      throw new InvalidInputError("tenantId: expected a non-empty tenant id", { field: "tenantId" });
    const similarity = options.textSimilarity ?? DEFAULT_CLUSTERER_OPTIONS.textSimilarity;
    if (!(similarity >= 0 && similarity <= 1)) {
      throw new InvalidInputError(`textSimilarity: expected a number in [0, 1], got ${similarity}`, {
        field: "textSimilarity",
      });
    }
    this.state = {
      format: "arc.cluster-state/1",
      tenantId,
      options: { ...DEFAULT_CLUSTERER_OPTIONS, ...options },
      docs: 0,
      df: {},
      patterns: [],
      centroids: {},
    };
  }

  /** A clusterer that continues from saved state (ids, counts and text statistics included). */
  static fromJSON(state: ClusterState): FailureClusterer {
    if (state?.format !== "arc.cluster-state/1") {
      throw new InvalidInputError(
        `state.format: expected "arc.cluster-state/1", got ${JSON.stringify(state?.format)}`,
        {
          field: "state.format",
        },
      );
    }
    const copy = structuredClone(state);
    const clusterer = new FailureClusterer(copy.tenantId, copy.options);
    Object.assign(clusterer.state, copy);
    for (const p of copy.patterns) clusterer.index(p);
    clusterer.dfSize = Object.keys(copy.df).length;
    return clusterer;
  }

  /** Puts one failure into its pattern (creating the pattern if needed). Assign each trace once. */
  assign(failure: FailureRecord): Assignment {
    const key = `${failure.class}|${failure.path ?? ""}|${failure.signature ?? ""}`;
    const terms = textTerms(failure.text);
    this.countDocument(terms);
    const candidates = this.byKey.get(key) ?? [];
    let target: FailurePattern | undefined;
    if (!this.state.options.textSplitClasses.includes(failure.class)) {
      target = candidates[0];
    } else {
      let best = -1;
      for (const p of candidates) {
        const sim = this.similarity(terms, this.state.centroids[p.id]);
        if (sim > best) {
          best = sim;
          target = p;
        }
      }
      if (best < this.state.options.textSimilarity) target = undefined;
    }
    const created = target === undefined;
    const pattern = target ?? this.create(key, failure, candidates.length);
    this.add(pattern, failure, terms);
    return { patternId: pattern.id, created };
  }

  /** Every pattern, largest first, with labels and top terms brought up to date. */
  patterns(): FailurePattern[] {
    return [...this.state.patterns]
      .map((p) => this.refreshed(p))
      .sort((a, b) => b.count - a.count || a.id.localeCompare(b.id));
  }

  /** One pattern by id, or undefined. */
  pattern(id: string): FailurePattern | undefined {
    const p = this.byId.get(id);
    return p ? this.refreshed(p) : undefined;
  }

  /** The state as JSON-safe data (a deep copy without undefined fields): what the server persists. */
  toJSON(): ClusterState {
    this.state.patterns = this.state.patterns.map((p) => {
      const fresh = this.refreshed(p);
      Object.assign(p, { label: fresh.label, topTerms: fresh.topTerms });
      return p;
    });
    return JSON.parse(JSON.stringify(this.state));
  }

  private index(p: FailurePattern): void {
    const list = this.byKey.get(p.key) ?? [];
    list.push(p);
    this.byKey.set(p.key, list);
    this.byId.set(p.id, p);
  }

  private create(key: string, f: FailureRecord, ordinal: number): FailurePattern {
    let id = `pat_${fnv1a(`${this.state.tenantId}|${key}`).toString(36)}${ordinal ? `_${ordinal}` : ""}`;
    while (this.byId.has(id)) id = `${id}x`;
    const pattern: FailurePattern = {
      id,
      tenantId: this.state.tenantId,
      key,
      class: f.class,
      path: f.path,
      signature: f.signature,
      label: "",
      count: 0,
      firstSeen: f.at,
      lastSeen: f.at,
      countsByDay: {},
      countsByModelVersion: {},
      countsByEnv: {},
      examples: [],
      topTerms: [],
    };
    this.state.patterns.push(pattern);
    this.state.centroids[id] = {};
    this.index(pattern);
    return pattern;
  }

  private add(p: FailurePattern, f: FailureRecord, terms: Map<string, number>): void {
    p.count++;
    if (Date.parse(f.at) < Date.parse(p.firstSeen)) p.firstSeen = f.at;
    if (Date.parse(f.at) > Date.parse(p.lastSeen)) p.lastSeen = f.at;
    const day = Number.isNaN(Date.parse(f.at)) ? "unknown" : new Date(f.at).toISOString().slice(0, 10);
    p.countsByDay[day] = (p.countsByDay[day] ?? 0) + 1;
    const version = f.modelVersion ?? "unknown";
    p.countsByModelVersion[version] = (p.countsByModelVersion[version] ?? 0) + 1;
    const env = f.env ?? "unknown";
    p.countsByEnv[env] = (p.countsByEnv[env] ?? 0) + 1;
    if (p.examples.length < this.state.options.maxExamples) {
      p.examples.push({
        traceId: f.traceId,
        question: f.text.slice(0, 200),
        output: f.output?.slice(0, 200),
        evidence: f.evidence?.slice(0, 200),
        modelVersion: f.modelVersion,
        at: f.at,
      });
    }
    const centroid = this.state.centroids[p.id];
    for (const [t, n] of terms) centroid[t] = (centroid[t] ?? 0) + n;
    const size = Object.keys(centroid).length;
    if (size > 2 * this.state.options.maxTerms) {
      const keep = Object.entries(centroid)
        .sort((a, b) => b[1] - a[1])
        .slice(0, this.state.options.maxTerms);
      this.state.centroids[p.id] = Object.fromEntries(keep);
    }
  }

  private countDocument(terms: Map<string, number>): void {
    this.state.docs++;
    const df = this.state.df;
    for (const t of terms.keys()) {
      const n = df[t];
      if (n === undefined) this.dfSize++;
      df[t] = (n ?? 0) + 1;
    }
    if (this.dfSize > MAX_DF_TERMS) {
      for (const [t, n] of Object.entries(df)) if (n <= 1) delete df[t];
      this.dfSize = Object.keys(df).length;
    }
  }

  private idf(term: string): number {
    return Math.log((1 + this.state.docs) / (1 + (this.state.df[term] ?? 0))) + 1;
  }

  private similarity(terms: Map<string, number>, centroid: Record<string, number>): number {
    let dot = 0;
    let nx = 0;
    for (const [t, n] of terms) {
      const w = n * this.idf(t);
      nx += w * w;
      const c = centroid[t];
      if (c !== undefined) dot += w * c * this.idf(t);
    }
    if (dot === 0) return 0;
    let nc = 0;
    for (const [t, c] of Object.entries(centroid)) {
      const w = c * this.idf(t);
      nc += w * w;
    }
    return dot / Math.sqrt(nx * nc);
  }

  private refreshed(p: FailurePattern): FailurePattern {
    const centroid = this.state.centroids[p.id] ?? {};
    const topTerms = Object.entries(centroid)
      .filter(([t]) => !t.includes(" ") && t !== "0" && t.length > 2)
      .map(([t, c]) => [t, c * this.idf(t)] as const)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, 3)
      .map(([t]) => t);
    const head = p.path ? `${p.class}: ${p.path}` : p.class;
    const tail = p.signature
      ? ` (${p.signature})`
      : !p.path && this.state.options.textSplitClasses.includes(p.class)
        ? `: ${topTerms.join(", ")}`
        : "";
    return structuredClone({ ...p, label: `${head}${tail}`, topTerms });
  }
}
