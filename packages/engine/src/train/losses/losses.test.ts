import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { initBackend, tf } from "../../backend/tf-backend.ts";
import { dpoLoss } from "./dpo-loss.ts";
import { grpoLoss } from "./grpo-loss.ts";
import { sftLoss } from "./sft-loss.ts";

const t2 = (rows: number[][]) => tf.tensor2d(rows);
const val = (x: tf.Tensor) => x.dataSync()[0];
const close = (a: number, b: number, tol = 1e-5) => assert.ok(Math.abs(a - b) <= tol, `${a} != ${b}`);

describe("losses on fixed inputs", () => {
  before(() => initBackend());

  it("SFT is the mean negative log-prob over masked tokens only", () => {
    const { loss } = sftLoss(
      t2([
        [-1, -2, -9],
        [-0.5, -9, -9],
      ]),
      t2([
        [1, 1, 0],
        [1, 0, 0],
      ]),
    );
    close(val(loss), (1 + 2 + 0.5) / 3);
  });

  it("DPO sigmoid equals -log sigmoid(beta * h) averaged over pairs", () => {
    // pair 0: chosen sum -1 (ref -2), rejected sum -3 (ref -2): h = (-1 + 3) - (-2 + 2) = 2
    const logp = t2([
      [-0.5, -0.5],
      [-1, -2],
    ]);
    const ref = t2([
      [-1, -1],
      [-1, -1],
    ]);
    const mask = t2([
      [1, 1],
      [1, 1],
    ]);
    const { loss, extra } = dpoLoss(logp, ref, mask, 0.5, "sigmoid");
    close(val(loss), Math.log(1 + Math.exp(-0.5 * 2)));
    close(val(extra.rewardAccuracy), 1);
    close(val(extra.margin), 1);
  });

  it("IPO equals (h - 1/(2 beta))^2", () => {
    const logp = t2([
      [-0.5, -0.5],
      [-1, -2],
    ]);
    const ref = t2([
      [-1, -1],
      [-1, -1],
    ]);
    const { loss } = dpoLoss(
      logp,
      ref,
      t2([
        [1, 1],
        [1, 0],
      ]),
      0.25,
      "ipo",
    );
    // masked: chosen -1 vs ref -2; rejected -1 vs ref -1: h = 1 - 0 = 1
    close(val(loss), (1 - 2) ** 2);
  });

  it("DPO adds nllCoef x the chosen rows' mean token NLL and subtracts entropyCoef x the mean token entropy", () => {
    // two pairs; rows 0 and 2 are chosen; the last token of row 2 is masked out
    const logp = t2([
      [-1, -3],
      [-2, -2],
      [-0.5, -9],
      [-1, -1],
    ]);
    const mask = t2([
      [1, 1],
      [1, 1],
      [1, 0],
      [1, 1],
    ]);
    const entropy = t2([
      [1, 2],
      [3, 4],
      [5, 100],
      [6, 7],
    ]);
    const plain = val(dpoLoss(logp, logp, mask, 0.1, "sigmoid").loss);
    const { loss, extra } = dpoLoss(logp, logp, mask, 0.1, "sigmoid", {
      nllCoef: 0.5,
      entropyCoef: 0.1,
      entropy,
    });
    const nll = (1 + 3 + 0.5) / 3;
    const meanEntropy = (1 + 2 + 3 + 4 + 5 + 6 + 7) / 7;
    close(val(extra.chosenNll), nll);
    close(val(extra.entropy), meanEntropy);
    close(val(loss), plain + 0.5 * nll - 0.1 * meanEntropy);
    assert.throws(() => dpoLoss(logp, logp, mask, 0.1, "sigmoid", { entropyCoef: 0.1 }), /entropy/);
  });

  it("GRPO clips the ratio on the side the advantage makes profitable, and aggregates as asked", () => {
    const logp = t2([
      [Math.log(1.5), 0],
      [Math.log(0.5), 0],
    ]);
    const old = t2([
      [0, 0],
      [0, 0],
    ]);
    const adv = t2([[1], [-1]]);
    const mask = t2([
      [1, 1],
      [1, 0],
    ]);
    const opts = { clipEpsilon: 0.2, klCoef: 0, entropyCoef: 0, aggregation: "token" as const };
    // row 0: tokens r=1.5 (A=1 -> min(1.5, 1.2) = 1.2), r=1 (1); row 1: r=0.5, A=-1 -> min(-0.5, -0.8) = -0.8
    const token = grpoLoss(logp, old, adv, mask, opts);
    close(val(token.loss), -(1.2 + 1 - 0.8) / 3);
    const seq = grpoLoss(logp, old, adv, mask, { ...opts, aggregation: "sequence" });
    close(val(seq.loss), (-(1.2 + 1) / 2 + 0.8) / 2);
    const dr = grpoLoss(logp, old, adv, mask, { ...opts, aggregation: "dr-grpo" });
    close(val(dr.loss), -(1.2 + 1 - 0.8) / 4);
    close(val(token.extra.clipFraction), 2 / 3);
  });

  it("GRPO adds klCoef * k3(KL) and subtracts entropyCoef * entropy per token", () => {
    const logp = t2([[-1]]);
    const ref = t2([[-1.5]]);
    const entropy = t2([[2]]);
    const opts = { clipEpsilon: 0.2, klCoef: 0.1, entropyCoef: 0.01, aggregation: "token" as const };
    const { loss, extra } = grpoLoss(logp, logp, t2([[0.5]]), t2([[1]]), opts, { refLogp: ref, entropy });
    const kl = Math.exp(-0.5) + 0.5 - 1;
    close(val(extra.kl), kl);
    close(val(loss), -0.5 + 0.1 * kl - 0.01 * 2);
  });

  it("decoupled GRPO clips against the proximal policy and weights tokens by pi_prox / pi_behaviour", () => {
    // token: pi_theta / pi_prox = 1.5 (clipped to 1.2 for A = 1), pi_prox / pi_behaviour = 2
    const opts = { clipEpsilon: 0.2, klCoef: 0, entropyCoef: 0, aggregation: "token" as const };
    const { loss, extra } = grpoLoss(t2([[Math.log(1.5)]]), t2([[0]]), t2([[1]]), t2([[1]]), opts, {
      behaviourWeight: t2([[2]]),
    });
    close(val(loss), -2 * 1.2);
    close(val(extra.behaviourWeight), 2);
  });
});
