import type { Counter, Gauge, Histogram } from "prom-client";

type Labels = Record<string, string>;

/** Whether a series carries exactly these label values. */
function sameLabels(actual: Partial<Record<string, string | number>>, expected: Labels): boolean {
  const keys = Object.keys(actual);
  return keys.length === Object.keys(expected).length && keys.every((k) => String(actual[k]) === expected[k]);
}

/** The value of one series of a counter or gauge now (0 when it has none). */
export async function seriesValue(
  metric: Counter<string> | Gauge<string>,
  labels: Labels = {},
): Promise<number> {
  const { values } = await metric.get();
  return values.find((v) => sameLabels(v.labels, labels))?.value ?? 0;
}

/** How many values one series of a histogram observed, and their sum (zeros when none). */
export async function histogramTotals(
  histogram: Histogram<string>,
  labels: Labels = {},
): Promise<{ count: number; sum: number }> {
  const { name, values } = await histogram.get();
  const total = (suffix: string) =>
    values.find((v) => v.metricName === `${name}${suffix}` && sameLabels(v.labels, labels))?.value ?? 0;
  return { count: total("_count"), sum: total("_sum") };
}
