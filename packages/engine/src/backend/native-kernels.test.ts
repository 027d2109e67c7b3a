import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { commandLacks, skipWithout } from "../../../../scripts/required-parts.mjs";
import { KvCache } from "../model/kv-cache.ts";
import { fusedCachedAttention } from "./fused-kernels.ts";
import { nativeAddon, nativeAddonStatus } from "./native-addon.ts";
import { nativeMatMulInstalled, packRightOperand } from "./native-matmul.ts";
import { initBackend, tf } from "./tf-backend.ts";

const here = dirname(fileURLToPath(import.meta.url));
const noCompiler = commandLacks(process.env.CC || "cc");
const skip = skipWithout(
  "cc",
  noCompiler
    ? `${noCompiler}: the engine runs on the wasm backend's own kernels`
    : process.env.ARC_ENGINE_NATIVE === "0" && "ARC_ENGINE_NATIVE=0 turns the native kernels off",
);

/** Runs a fixture script (its JSON output) in a child process with the native kernels on ("1") or off ("0"). */
function runFixture<T>(name: string, native: "0" | "1"): T {
  const child = spawnSync(process.execPath, ["--import", "tsx", join(here, "__fixtures__", name)], {
    env: { ...process.env, ARC_ENGINE_NATIVE: native },
    encoding: "utf8",
  });
  assert.equal(child.status, 0, child.stderr);
  return JSON.parse(child.stdout) as T;
}

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

  for (const s of [
    { m: 6, n: 19, k: 5 }, // one register tile of rows, a partial column sliver
    { m: 16, n: 264, k: 128 }, // a decoding step's head product
    { m: 100, n: 33, k: 300 }, // several row tiles, depth over one packed block
  ]) {
    it(`a packed right operand gives the plain product: ${JSON.stringify(s)}`, async () => {
      await initBackend("wasm");
      const aData = Float32Array.from({ length: s.m * s.k }, (_, i) => Math.sin(i * 1.1));
      const bData = Float32Array.from({ length: s.k * s.n }, (_, i) => Math.cos(i * 0.3));
      const want = reference(aData, bData, 1, s.m, s.n, s.k, false, false);
      const packed = new Float32Array(Math.ceil(s.n / 16) * 16 * s.k);
      const addon = nativeAddon();
      assert.ok(addon);
      addon.packPanels(bData, packed, s.k, s.n);
      const direct = new Float32Array(s.m * s.n);
      addon.matMulPacked(aData, packed, direct, s.m, s.n, s.k);
      const b = tf.tensor2d(bData, [s.k, s.n]);
      packRightOperand(b);
      const a = tf.tensor2d(aData, [s.m, s.k]);
      const viaTf = tf.matMul(a, b).dataSync();
      for (let i = 0; i < want.length; i++) {
        assert.ok(Math.abs(direct[i] - want[i]) < 1e-4, `matMulPacked [${i}] ${direct[i]} vs ${want[i]}`);
        assert.ok(Math.abs(viaTf[i] - want[i]) < 1e-4, `tf.matMul [${i}] ${viaTf[i]} vs ${want[i]}`);
      }
      tf.dispose([a, b]);
    });
  }

  it("attend over a cache they write in place, as softmax attention does", async () => {
    await initBackend("wasm");
    const [B, T, H, K, D, past] = [2, 3, 4, 2, 8, 5];
    const S = past + T;
    const cache = new KvCache(B, K, D, 1, 10);
    for (let i = 0; i < cache.keys[0].length; i++) {
      cache.keys[0][i] = Math.sin(i * 0.37);
      cache.values[0][i] = Math.cos(i * 0.53);
    }
    cache.length = past;
    const before = { keys: cache.keys[0].slice(), values: cache.values[0].slice() };
    const q = Float32Array.from({ length: B * T * H * D }, (_, i) => Math.sin(i * 0.71));
    const k = Float32Array.from({ length: B * T * K * D }, (_, i) => Math.cos(i * 0.29));
    const v = Float32Array.from({ length: B * T * K * D }, (_, i) => Math.sin(i * 0.13 + 1));
    // row 1 has two positions of left padding; both rows see only positions up to their own
    const mask = new Float32Array(B * T * S);
    for (let b = 0; b < B; b++)
      for (let t = 0; t < T; t++)
        for (let s = 0; s < S; s++) if (s > past + t || (b === 1 && s < 2)) mask[(b * T + t) * S + s] = -1e9;
    const out = fusedCachedAttention(
      tf.tensor4d(q, [B, T, H, D]),
      tf.tensor4d(k, [B, T, K, D]),
      tf.tensor4d(v, [B, T, K, D]),
      tf.tensor4d(mask, [B, 1, T, S]),
      { keys: cache.keys[0], values: cache.values[0], past, capacity: cache.capacity },
    ).dataSync();
    const at = (b: number, kh: number, s: number) => (b * K + kh) * cache.capacity * D + s * D;
    for (let b = 0; b < B; b++)
      for (let kh = 0; kh < K; kh++) {
        for (let s = 0; s < cache.capacity; s++)
          for (let j = 0; j < D; j++) {
            const written = s >= past && s < S;
            const src = ((b * T + (s - past)) * K + kh) * D + j;
            assert.equal(cache.keys[0][at(b, kh, s) + j], written ? k[src] : before.keys[at(b, kh, s) + j]);
            assert.equal(
              cache.values[0][at(b, kh, s) + j],
              written ? v[src] : before.values[at(b, kh, s) + j],
            );
          }
      }
    for (let b = 0; b < B; b++)
      for (let t = 0; t < T; t++)
        for (let h = 0; h < H; h++) {
          const kh = Math.floor(h / (H / K));
          const scores = Array.from({ length: S }, (_, s) => {
            let dot = 0;
            for (let j = 0; j < D; j++)
              dot += q[((b * T + t) * H + h) * D + j] * cache.keys[0][at(b, kh, s) + j];
            return dot + mask[(b * T + t) * S + s];
          });
          const top = Math.max(...scores);
          const weights = scores.map((x) => Math.exp(x - top));
          const total = weights.reduce((x, y) => x + y, 0);
          for (let j = 0; j < D; j++) {
            let want = 0;
            for (let s = 0; s < S; s++) want += (weights[s] / total) * cache.values[0][at(b, kh, s) + j];
            const got = out[((b * T + t) * H + h) * D + j];
            assert.ok(Math.abs(got - want) < 1e-5, `out[${b},${t},${h},${j}] ${got} vs ${want}`);
          }
        }
  });

  it("decode what the wasm backend's own kernels decode, under continuous batching", () => {
    type Decoded = { status: { active: boolean }; samples: { tokens: number[]; logprobs: number[] }[] };
    const fallback = runFixture<Decoded>("micro-generate.ts", "0");
    const native = runFixture<Decoded>("micro-generate.ts", "1");
    assert.equal(fallback.status.active, false);
    assert.equal(native.status.active, true);
    assert.equal(native.samples.length, 8);
    native.samples.forEach((sample, i) => {
      assert.deepEqual(sample.tokens, fallback.samples[i].tokens, `sample ${i}`);
      sample.logprobs.forEach((lp, j) => {
        assert.ok(Math.abs(lp - fallback.samples[i].logprobs[j]) < 1e-4, `sample ${i} token ${j}`);
      });
    });
  });

  it("give a model the loss and gradients the wasm backend's own kernels give", () => {
    type LossAndGrads = { status: { active: boolean }; loss: number; sums: Record<string, number[]> };
    const fallback = runFixture<LossAndGrads>("micro-loss-and-grads.ts", "0");
    const native = runFixture<LossAndGrads>("micro-loss-and-grads.ts", "1");
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
