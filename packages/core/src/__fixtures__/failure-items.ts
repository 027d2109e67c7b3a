import { FailureClusterer, failureRecord } from "../cluster/index.ts";
import { DetectorRegistry } from "../detect/index.ts";
import { type FailureItem, failureItemFromTrace } from "../synth/index.ts";
import { simulateProductionTraffic } from "../testing/simulate/index.ts";
import { Trace } from "../trace/index.ts";

/** Failure items of simulated production traffic, detected and clustered as the server would. */
export async function simulatedFailureItems(seed: number, count: number): Promise<FailureItem[]> {
  const registry = new DetectorRegistry();
  const clusterer = new FailureClusterer("acme");
  const items: FailureItem[] = [];
  for (const sim of simulateProductionTraffic({ seed, count })) {
    const trace = Trace.parse(sim.trace);
    const judgement = await registry.judge(trace, sim.feedback);
    const record = failureRecord(trace, judgement);
    if (!record) continue;
    const item = failureItemFromTrace(trace, judgement, clusterer.assign(record).patternId);
    if (item) items.push(item);
  }
  return items;
}
