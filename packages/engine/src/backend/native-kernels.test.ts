import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { nativeAddonStatus } from "./native-addon.ts";
import { nativeMatMulInstalled } from "./native-matmul.ts";
import { initBackend, tf } from "./tf-backend.ts";

const here = dirname(fileURLToPath(import.meta.url));
const hasCompiler = (() => {
  try {
    execFileSync(process.env.CC || "cc", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
const skip = !hasCompiler
  ? "no C compiler (cc) on this machine: the engine runs on the wasm backend's own kernels"
  : process.env.ARC_ENGINE_NATIVE === "0"
    ? "ARC_ENGINE_NATIVE=0"
    : false;

/** op(a) op(b) per batch entry, in plain JS: the reference. */
function reference(
  a: Float32Array,
  b: Float32Array,
  batch: number,
  m: number,
  n: number,
  k: number,
  ta: boolean,
  tb: boolean,
) {
  const c = new Float32Array(batch * m * n);
  for (let e = 0; e < batch; e++) {
    const ae = a.subarray(a.length === m * k ? 0 : e * m * k);
    const be = b.subarray(b.length === k * n ? 0 : e * k * n);
    for (let i = 0; i < m; i++)
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let p = 0; p < k; p++)
          s += (ta ? ae[p * m + i] : ae[i * k + p]) * (tb ? be[j * k + p] : be[p * n + j]);
        c[(e * m + i) * n + j] = s;
      }
  }
  return c;
}

describe("native kernels", { skip }, () => {
  it("build on this machine and run the wasm backend's products", async () => {
    await initBackend("wasm");
    const status = nativeAddonStatus();
    assert.ok(status.active, `not active: ${!status.active && status.reason}`);
    assert.ok(nativeMatMulInstalled());
  });

  const shapes: { batch: number; m: number; n: number; k: number; aBatch?: 1; bBatch?: 1 }[] = [
    { batch: 1, m: 7, n: 19, k: 5 }, // edges of both register-tile dimensions
    { batch: 3, m: 13, n: 33, k: 300 }, // depth over one packed block
    { batch: 2, m: 1, n: 40, k: 24 }, // one row (decoding)
    { batch: 4, m: 3, n: 17, k: 9, bBatch: 1 }, // a right operand shared by every entry
    { batch: 2, m: 8, n: 5, k: 6, aBatch: 1 }, // a left operand shared by every entry
    { batch: 1, m: 4, n: 3, k: 0 }, // empty inner dimension
  ];
  for (const s of shapes) {
    for (const [ta, tb] of [
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ]) {
      it(`tf.matMul equals the plain product: ${JSON.stringify(s)}, transposeA ${ta}, transposeB ${tb}`, async () => {
        await initBackend("wasm");
        const aEntries = s.aBatch ?? s.batch;
        const bEntries = s.bBatch ?? s.batch;
        const aData = Float32Array.from({ length: aEntries * s.m * s.k }, (_, i) => Math.sin(i * 1.3));
        const bData = Float32Array.from({ length: bEntries * s.k * s.n }, (_, i) => Math.cos(i * 0.7));
        const a = tf.tensor(aData, [aEntries, ...(ta ? [s.k, s.m] : [s.m, s.k])]);
        const b = tf.tensor(bData, [bEntries, ...(tb ? [s.n, s.k] : [s.k, s.n])]);
        const c = tf.matMul(a, b, ta, tb);
        assert.deepEqual(c.shape, [s.batch, s.m, s.n]);
        const want = reference(aData, bData, s.batch, s.m, s.n, s.k, ta, tb);
        const got = c.dataSync();
        for (let i = 0; i < want.length; i++)
          assert.ok(Math.abs(got[i] - want[i]) < 1e-4, `[${i}] ${got[i]} vs ${want[i]}`);
        tf.dispose([a, b, c]);
      });
    }
  }

  it("give a model the loss and gradients the wasm backend's own kernels give", () => {
    const script = join(here, "__fixtures__", "micro-loss-and-grads.ts");
    const run = (native: string) => {
      const child = spawnSync(process.execPath, ["--import", "tsx", script], {
        env: { ...process.env, ARC_ENGINE_NATIVE: native },
        encoding: "utf8",
      });
      assert.equal(child.status, 0, child.stderr);
      return JSON.parse(child.stdout) as {
        status: { active: boolean };
        loss: number;
        sums: Record<string, number[]>;
      };
    };
    const fallback = run("0");
    const native = run("1");
    assert.equal(fallback.status.active, false);
    assert.equal(native.status.active, true);
    assert.ok(
      Math.abs(native.loss - fallback.loss) < 1e-4 * Math.abs(fallback.loss),
      `${native.loss} vs ${fallback.loss}`,
    );
    for (const [name, [sum, absSum]] of Object.entries(fallback.sums)) {
      const [nativeSum, nativeAbsSum] = native.sums[name];
      assert.ok(
        Math.abs(nativeAbsSum - absSum) <= 1e-3 * absSum + 1e-6,
        `${name}: |grad| sums ${nativeAbsSum} vs ${absSum}`,
      );
      assert.ok(
        Math.abs(nativeSum - sum) <= 1e-3 * absSum + 1e-6,
        `${name}: grad sums ${nativeSum} vs ${sum}`,
      );
    }
  });
});
