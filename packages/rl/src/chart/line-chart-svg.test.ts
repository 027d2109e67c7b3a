import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lineChartSvg } from "./line-chart-svg.ts";

describe("lineChartSvg", () => {
  it("draws one path per series with a legend entry, inside the SVG's box", () => {
    const svg = lineChartSvg(
      [
        {
          name: "reward",
          points: [
            { x: 0, y: 0.1 },
            { x: 1, y: 0.5 },
            { x: 2, y: 0.9 },
          ],
        },
        {
          name: "loss <dpo>",
          points: [
            { x: 0, y: 0.7 },
            { x: 2, y: 0.3 },
          ],
        },
      ],
      { title: "run", xLabel: "step", yLabel: "value", yRange: [0, 1] },
    );
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.equal(svg.match(/<path /g)?.length, 2);
    assert.match(svg, /loss &lt;dpo&gt;/);
    const points = [...svg.matchAll(/<path d="([^"]*)"/g)].flatMap(([, d]) => d.split(" "));
    assert.equal(points.length, 5, "every point of both series is drawn");
    for (const point of points) {
      const [, x, y] = /^[ML](-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)$/.exec(point) ?? [];
      assert.ok(x !== undefined && y !== undefined, `a path point is M or L then x,y: ${point}`);
      assert.ok(Number(x) >= 0 && Number(x) <= 640 && Number(y) >= 0 && Number(y) <= 360, point);
    }
  });

  it("skips non-finite points instead of writing NaN into the path", () => {
    const svg = lineChartSvg(
      [
        {
          name: "loss",
          points: [
            { x: 0, y: Number.NaN },
            { x: 1, y: 2 },
          ],
        },
      ],
      {
        title: "t",
        xLabel: "x",
        yLabel: "y",
      },
    );
    assert.ok(!svg.includes("NaN"));
  });
});
