import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInputError } from "../../errors/index.ts";
import { NdrMonitor } from "./ndr-monitor.ts";

const kept = { taughtScore: 1, baselineScore: 1 };
const degraded = { taughtScore: 0, baselineScore: 1 };

function feed(monitor: NdrMonitor, pattern: string, clean: number, bad: number) {
  for (let i = 0; i < bad; i++) monitor.record(pattern, degraded);
  for (let i = 0; i < clean; i++) monitor.record(pattern, kept);
  return monitor.decision(pattern);
}

describe("NdrMonitor", () => {
  it("keeps teaching on until minSamples outcomes are in, whatever they show", () => {
    const d = feed(new NdrMonitor(), "p", 0, 19);
    assert.equal(d.teaching, true);
    assert.equal(d.reason, "19 of 20 samples needed before deciding");
  });

  it("keeps teaching on for 1 degradation in 20, where the raw NDR 0.95 alone would fail the 0.99 gate", () => {
    const d = feed(new NdrMonitor(), "p", 19, 1);
    assert.equal(d.ndr, 0.95);
    assert.ok(d.upper > 0.99 && d.upper < 0.992, `upper ${d.upper}`);
    assert.equal(d.teaching, true);
  });

  it("switches teaching off for 2 degradations in 20: the Wilson upper bound 0.972 is below 0.99", () => {
    const monitor = new NdrMonitor();
    const d = feed(monitor, "p", 18, 2);
    assert.ok(Math.abs(d.upper - 0.9721) < 1e-3, `upper ${d.upper}`);
    assert.equal(d.teaching, false);
    assert.match(d.reason, /upper bound 0\.972\d of NDR 0\.9000 over 20 samples is below the gate 0\.99/);
    assert.equal(monitor.shouldTeach("p"), false);
  });

  it("keeps a switched-off pattern off as clean outcomes arrive, until reset", () => {
    const monitor = new NdrMonitor();
    feed(monitor, "p", 18, 2);
    const later = feed(monitor, "p", 200, 0);
    assert.equal(later.teaching, false);
    assert.match(later.reason, /^switched off earlier: /);
    monitor.reset("p");
    assert.equal(monitor.shouldTeach("p"), true);
    assert.equal(monitor.decision("p").samples, 0);
  });

  it("keeps patterns apart", () => {
    const monitor = new NdrMonitor();
    feed(monitor, "bad", 10, 10);
    feed(monitor, "good", 30, 0);
    assert.equal(monitor.shouldTeach("bad"), false);
    assert.equal(monitor.shouldTeach("good"), true);
    assert.equal(monitor.shouldTeach("unseen"), true);
    assert.deepEqual(
      monitor.decisions().map((d) => [d.patternId, d.teaching]),
      [
        ["bad", false],
        ["good", true],
      ],
    );
  });

  it("counts only the latest window of outcomes", () => {
    const monitor = new NdrMonitor({ window: 10, minSamples: 10, gate: 0.5 });
    const d = feed(monitor, "p", 15, 3);
    assert.equal(d.samples, 10);
    assert.equal(d.degradations, 0);
    assert.equal(d.teaching, true);
  });

  it("switches off at once under the strict lower bound unless the sample proves the gate", () => {
    const d = feed(new NdrMonitor({ bound: "lower" }), "p", 20, 0);
    assert.ok(Math.abs(d.lower - 20 / (20 + 1.96 ** 2)) < 1e-9);
    assert.equal(d.teaching, false);
  });

  it("ignores outcomes without a baseline, which cannot show degradation", () => {
    const monitor = new NdrMonitor();
    monitor.record("p", { taughtScore: 0 });
    assert.equal(monitor.decision("p").samples, 0);
  });

  it("rejects a score outside [0, 1]", () => {
    assert.throws(
      () => new NdrMonitor().record("p", { taughtScore: 1, baselineScore: 7 }),
      /baselineScore: expected a score in \[0, 1\], got 7/,
    );
  });

  it("rejects a gate above 1 and a minSamples larger than the window, naming the field", () => {
    assert.throws(
      () => new NdrMonitor({ gate: 1.5 }),
      (e: unknown) => e instanceof InvalidInputError && e.field === "ndrMonitor.gate",
    );
    assert.throws(
      () => new NdrMonitor({ window: 10, minSamples: 20 }),
      /ndrMonitor\.minSamples: minSamples must not exceed window/,
    );
  });
});
