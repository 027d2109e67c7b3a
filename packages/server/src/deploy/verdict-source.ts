import { DetectorRegistry, type Trace } from "@arc/core";
import { getVerdicts } from "../failures/verdict-store.ts";
import type { Queryable } from "../store/database.ts";

/** A trace's live judgement, as the canary counts it. */
export interface LiveVerdict {
  status: "failed" | "passed" | "unknown";
  failureClass?: string;
}

/** Where the deployer gets the detectors' verdict on a gateway trace. */
export interface VerdictSource {
  /** One verdict per trace, in order; null for a trace not judged yet (the deployer looks at it again later). */
  judge(tenantId: string, traces: Trace[]): Promise<(LiveVerdict | null)[]>;
}

/** Runs the tenant's detectors in this process (one registry per tenant, made by `registryFor`). */
export class InlineVerdicts implements VerdictSource {
  private readonly registries = new Map<string, DetectorRegistry>();

  constructor(
    private readonly registryFor: (tenantId: string) => DetectorRegistry = () => new DetectorRegistry(),
  ) {}

  async judge(tenantId: string, traces: Trace[]): Promise<LiveVerdict[]> {
    let registry = this.registries.get(tenantId);
    if (!registry) {
      registry = this.registryFor(tenantId);
      this.registries.set(tenantId, registry);
    }
    return Promise.all(
      traces.map(async (trace) => {
        const judgement = await registry.judge(trace);
        return { status: judgement.status, failureClass: judgement.primary?.class };
      }),
    );
  }
}

/**
 * The failure pipeline's stored verdicts (the detection worker judges every ingested trace with the tenant's own
 * detector settings), so a canary is judged exactly as the patterns are. A trace the worker has not judged within
 * `waitMs` of its end is judged by `fallback` instead, so a canary never stalls when no detection worker runs.
 */
export class StoredVerdicts implements VerdictSource {
  constructor(
    private readonly db: Queryable,
    private readonly fallback: VerdictSource = new InlineVerdicts(),
    private readonly waitMs = 5_000,
  ) {}

  async judge(tenantId: string, traces: Trace[]): Promise<(LiveVerdict | null)[]> {
    const stored = await getVerdicts(
      this.db,
      tenantId,
      traces.map((t) => t.id),
    );
    const now = Date.now();
    const late = traces.filter(
      (t) => !stored.has(t.id) && now - Date.parse(t.endedAt ?? t.startedAt) >= this.waitMs,
    );
    const inline = new Map<string, LiveVerdict | null>();
    const judged = await this.fallback.judge(tenantId, late);
    for (const [i, v] of judged.entries()) inline.set(late[i].id, v);
    return traces.map((t) => {
      const v = stored.get(t.id);
      if (v) return { status: v.status, failureClass: v.failureClass ?? undefined };
      return inline.get(t.id) ?? null;
    });
  }
}
