import { DetectorRegistry, type Trace } from "@arc/core";

/** A trace's live judgement, as the canary counts it. */
export interface LiveVerdict {
  status: "failed" | "passed" | "unknown";
  failureClass?: string;
}

/**
 * Where the deployer gets the detectors' verdict on a gateway trace. The failure worker stores verdicts of every
 * ingested trace; until the deployer reads them from there, `InlineVerdicts` runs the detectors itself.
 */
export interface VerdictSource {
  judge(tenantId: string, traces: Trace[]): Promise<LiveVerdict[]>;
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
    return traces.map((trace) => {
      const judgement = registry.judge(trace);
      return { status: judgement.status, failureClass: judgement.primary?.class };
    });
  }
}
