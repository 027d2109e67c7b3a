import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { barChartSvg, lineChartSvg, niceTicks } from "./svg-charts.ts";

/** Every point of every path of `svg`, as [x, y]. */
function pathPoints(svg: string): [number, number][] {
  return [...svg.matchAll(/<path d="([^"]*)"/g)].flatMap(([, d]) =>
    [...d.matchAll(/[ML](-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)/g)].map(
      ([, x, y]) => [Number(x), Number(y)] as [number, number],
    ),
  );
}

describe("SVG charts", () => {
  it("draws one path per series with a legend entry, every point inside the SVG's box", () => {
    const svg = lineChartSvg({
      title: "run",
      series: [
        { name: "reward", points: [0, 1, 2].map((x) => ({ x, y: 0.1 + 0.4 * x })) },
        {
          name: "loss <dpo>",
          points: [
            { x: 0, y: 0.7 },
            { x: 2, y: 0.3 },
          ],
        },
      ],
      xLabel: "step",
      yLabel: "value",
      xIntegers: true,
    });
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.equal(svg.match(/<path /g)?.length, 2);
    assert.match(svg, /loss &#60;dpo&#62;/);
    const points = pathPoints(svg);
    assert.equal(points.length, 5, "every point of both series is drawn");
    for (const [x, y] of points) assert.ok(x >= 0 && x <= 640 && y >= 0 && y <= 260, `${x},${y}`);
  });

  it("leaves non-finite points out instead of writing NaN into the path", () => {
    const svg = lineChartSvg({
      title: "t",
      series: [
        {
          name: "loss",
          points: [
            { x: 0, y: Number.NaN },
            { x: 1, y: 2 },
            { x: Number.POSITIVE_INFINITY, y: 1 },
          ],
        },
      ],
      xLabel: "x",
      yLabel: "y",
    });
    assert.ok(!svg.includes("NaN") && !svg.includes("Infinity"));
    assert.equal(pathPoints(svg).length, 1);
  });

  it("labels the axes with round ticks that cover the data", () => {
    assert.deepEqual(niceTicks(0, 0.93), [0, 0.2, 0.4, 0.6, 0.8, 1]);
    assert.deepEqual(niceTicks(0, 7, 5, true), [0, 2, 4, 6, 8]);
  });

  it("draws a bar per category and series, as tall as its value", () => {
    const svg = barChartSvg({
      title: "calls",
      categories: ["a", "b"],
      series: [
        { name: "base", values: [4, 2] },
        { name: "final", values: [2, 0] },
      ],
      yLabel: "failures",
    });
    const heights = [...svg.matchAll(/<rect x="[^"]*" y="[^"]*" width="[^"]*" height="([^"]*)"/g)].map(
      ([, h]) => Number(h),
    );
    assert.equal(heights.length, 4);
    assert.equal(heights[0], 2 * heights[1], "4 is twice as tall as 2");
    assert.equal(heights[3], 0);
  });
});
