import { tf } from "../backend/tf-backend.ts";

/** AdamW hyper-parameters. */
export interface AdamWOptions {
  /** Peak learning rate, reached after `warmupSteps`. */
  learningRate: number;
  /** Linear warm-up from lr/warmupSteps to lr over this many steps (0: none). */
  warmupSteps: number;
  /** Cosine decay from the peak to `minLearningRate` over this many steps after warm-up, then flat (0: constant peak). */
  decaySteps: number;
  /** Where the cosine decay ends. */
  minLearningRate: number;
  /** Decay of the first-moment (mean) estimate. */
  beta1: number;
  /** Decay of the second-moment (uncentred variance) estimate. */
  beta2: number;
  /** Added to the root of the second moment, keeps updates finite. */
  epsilon: number;
  /** Decoupled weight decay (Loshchilov & Hutter 2019), applied to matrices only, not norms or biases. */
  weightDecay: number;
}

/** AdamW's defaults: a constant 1e-3 with no warm-up or decay, PyTorch's betas and epsilon, no weight decay. */
export const ADAMW_DEFAULTS: AdamWOptions = {
  learningRate: 1e-3,
  warmupSteps: 0,
  decaySteps: 0,
  minLearningRate: 0,
  beta1: 0.9,
  beta2: 0.999,
  epsilon: 1e-8,
  weightDecay: 0,
};

/**
 * AdamW with bias correction and decoupled weight decay. Its moments are Float32Arrays, so that `save`/`load`
 * write and restore them exactly, and one update is a loop over each parameter's values: a handful of tensor
 * calls per parameter instead of a dozen kernels, which at these model sizes cost more than the arithmetic.
 */
export class AdamW {
  readonly options: AdamWOptions;
  /** Number of updates applied so far. */
  step = 0;
  readonly exp_avg = new Map<string, Float32Array>();
  readonly exp_avg_sq = new Map<string, Float32Array>();

  constructor(options: AdamWOptions) {
    this.options = options;
  }

  /** Learning rate of the next update: linear warm-up, then the peak, or a cosine decay when `decaySteps` > 0. */
  learningRate(): number {
    const { learningRate, warmupSteps, decaySteps, minLearningRate } = this.options;
    if (this.step < warmupSteps) return (learningRate * (this.step + 1)) / warmupSteps;
    if (!(decaySteps > 0)) return learningRate;
    const progress = Math.min(this.step - warmupSteps, decaySteps) / decaySteps;
    return minLearningRate + ((learningRate - minLearningRate) * (1 + Math.cos(Math.PI * progress))) / 2;
  }

  /**
   * Applies one update to `params` with `grads` (same names), each gradient multiplied by `gradScale` first (the
   * clipping factor); returns the learning rate used.
   */
  apply(params: Map<string, tf.Variable>, grads: Map<string, Float32Array>, gradScale = 1): number {
    const { beta1, beta2, epsilon, weightDecay } = this.options;
    const lr = this.learningRate();
    this.step++;
    const c1 = 1 - beta1 ** this.step;
    const c2 = 1 - beta2 ** this.step;
    for (const [name, p] of params) {
      const g = grads.get(name);
      if (!g) continue;
      const values = p.dataSync() as Float32Array; // a copy, updated in place below
      let m = this.exp_avg.get(name);
      let v = this.exp_avg_sq.get(name);
      if (!m || !v) {
        m = new Float32Array(values.length);
        v = new Float32Array(values.length);
        this.exp_avg.set(name, m);
        this.exp_avg_sq.set(name, v);
      }
      const keep = 1 - lr * (p.shape.length >= 2 ? weightDecay : 0);
      for (let i = 0; i < values.length; i++) {
        const gi = g[i] * gradScale;
        const mi = beta1 * m[i] + (1 - beta1) * gi;
        const vi = beta2 * v[i] + (1 - beta2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        values[i] = values[i] * keep - (lr * (mi / c1)) / (Math.sqrt(vi / c2) + epsilon);
      }
      const updated = tf.tensor(values, p.shape);
      p.assign(updated);
      updated.dispose();
    }
    return lr;
  }
}
