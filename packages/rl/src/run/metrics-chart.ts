import { lineChartSvg } from "../chart/index.ts";
import type { StepRecord } from "./run-types.ts";

/** The run's curves as one SVG: loss, reward, rollout accuracy and held-out failure rate per step. */
export function metricsChartSvg(records: readonly StepRecord[], title: string): string {
  const pick = (f: (r: StepRecord) => number | null | undefined) =>
    records.flatMap((r) => {
      const y = f(r);
      return y === null || y === undefined ? [] : [{ x: r.step, y }];
    });
  return lineChartSvg({
    title,
    series: [
      { name: "loss", points: pick((r) => (r.step > 0 ? r.loss : null)) },
      { name: "reward", points: pick((r) => (r.step > 0 ? r.reward : null)) },
      { name: "rollout accuracy", points: pick((r) => (r.step > 0 ? r.accuracy : null)) },
      { name: "held-out failure rate", points: pick((r) => r.evalFailureRate) },
    ],
    xLabel: "step",
    yLabel: "value",
    xIntegers: true,
  });
}
