/**
 * RoPE frequency scaling for contexts longer than a model was pretrained on, as HF configs describe it
 * (`rope_scaling`, or `rope_parameters` in transformers >= 5):
 * - `linear`: every frequency divided by `factor` (position interpolation, Chen et al. 2023);
 * - `llama3`: low frequencies divided by `factor`, high ones kept, a smooth ramp between (Llama 3.1);
 * - `yarn`: a ramp between interpolated and extrapolated frequencies over the dimensions whose wavelengths fall
 *   between `beta_fast` and `beta_slow` rotations of the original context, and cos/sin scaled by an attention
 *   factor (Peng et al. 2023).
 */

/** A config's RoPE scaling, with the fields its type reads. */
export type RopeScaling =
  | { rope_type: "linear"; factor: number }
  | {
      rope_type: "llama3";
      factor: number;
      low_freq_factor: number;
      high_freq_factor: number;
      original_max_position_embeddings: number;
    }
  | {
      rope_type: "yarn";
      factor: number;
      original_max_position_embeddings: number;
      attention_factor?: number;
      beta_fast?: number;
      beta_slow?: number;
      mscale?: number;
      mscale_all_dim?: number;
      truncate?: boolean;
    };

/** The scaling types this engine computes. */
export const ROPE_SCALING_TYPES = ["linear", "llama3", "yarn"] as const;

/** YaRN's attention temperature for a context `scale` times the original. */
function yarnMscale(scale: number, mscale = 1): number {
  return scale <= 1 ? 1 : 0.1 * mscale * Math.log(scale) + 1;
}

/**
 * The inverse frequency of each rotated pair of a head of width `dim` (in float32 steps, as transformers computes
 * them), and the factor cos and sin are scaled by.
 */
export function ropeFrequencies(
  dim: number,
  theta: number,
  scaling: RopeScaling | undefined,
): { inverse: number[]; attentionScaling: number } {
  const f = Math.fround;
  const base = Array.from({ length: dim / 2 }, (_, i) => f(1 / f(f(theta) ** f((2 * i) / dim))));
  if (!scaling) return { inverse: base, attentionScaling: 1 };
  if (scaling.rope_type === "linear")
    return { inverse: base.map((x) => f(x / scaling.factor)), attentionScaling: 1 };
  if (scaling.rope_type === "llama3") {
    const {
      factor,
      low_freq_factor: low,
      high_freq_factor: high,
      original_max_position_embeddings: context,
    } = scaling;
    const inverse = base.map((freq) => {
      const wavelength = (2 * Math.PI) / freq;
      if (wavelength < context / high) return freq;
      if (wavelength > context / low) return f(freq / factor);
      const smooth = (context / wavelength - low) / (high - low);
      return f((1 - smooth) * (freq / factor) + smooth * freq);
    });
    return { inverse, attentionScaling: 1 };
  }
  const { factor, original_max_position_embeddings: context } = scaling;
  const attentionScaling =
    scaling.attention_factor ??
    (scaling.mscale && scaling.mscale_all_dim
      ? yarnMscale(factor, scaling.mscale) / yarnMscale(factor, scaling.mscale_all_dim)
      : yarnMscale(factor));
  const correction = (rotations: number) =>
    (dim * Math.log(context / (rotations * 2 * Math.PI))) / (2 * Math.log(theta));
  let low = correction(scaling.beta_fast ?? 32);
  let high = correction(scaling.beta_slow ?? 1);
  if (scaling.truncate ?? true) {
    low = Math.floor(low);
    high = Math.ceil(high);
  }
  low = Math.max(low, 0);
  high = Math.min(high, dim - 1);
  if (low === high) high += 0.001;
  const inverse = base.map((freq, i) => {
    const extrapolation = 1 - Math.min(Math.max((i - low) / (high - low), 0), 1);
    return f((freq / factor) * (1 - extrapolation) + freq * extrapolation);
  });
  return { inverse, attentionScaling };
}

/** A number field of a scaling block; throws naming it when it is missing or not a positive number. */
function positive(block: Record<string, unknown>, key: string, file: string): number {
  const x = block[key];
  if (typeof x !== "number" || !(x > 0))
    throw new TypeError(`${file}: rope scaling ${key}: expected a positive number, got ${JSON.stringify(x)}`);
  return x;
}

/**
 * The RoPE scaling of a config's `rope_parameters` or `rope_scaling` block (`rope_type` or the older `type`), or
 * undefined for plain RoPE; throws naming the file and field for a type this engine does not compute.
 */
export function parseRopeScaling(
  block: Record<string, unknown> | null | undefined,
  maxPositions: number,
  file: string,
): RopeScaling | undefined {
  if (block == null) return undefined;
  const type = block.rope_type ?? block.type;
  if (type === undefined || type === "default") return undefined;
  if (!(ROPE_SCALING_TYPES as readonly unknown[]).includes(type))
    throw new TypeError(
      `${file}: rope scaling type ${JSON.stringify(type)} is not supported; expected one of default, ${ROPE_SCALING_TYPES.join(", ")}`,
    );
  if (type === "linear") return { rope_type: "linear", factor: positive(block, "factor", file) };
  if (type === "llama3")
    return {
      rope_type: "llama3",
      factor: positive(block, "factor", file),
      low_freq_factor: positive(block, "low_freq_factor", file),
      high_freq_factor: positive(block, "high_freq_factor", file),
      original_max_position_embeddings: positive(block, "original_max_position_embeddings", file),
    };
  const original = positive(block, "original_max_position_embeddings", file);
  const optional = (key: string) => (typeof block[key] === "number" ? (block[key] as number) : undefined);
  return {
    rope_type: "yarn",
    factor: optional("factor") ?? maxPositions / original,
    original_max_position_embeddings: original,
    attention_factor: optional("attention_factor"),
    beta_fast: optional("beta_fast"),
    beta_slow: optional("beta_slow"),
    mscale: optional("mscale"),
    mscale_all_dim: optional("mscale_all_dim"),
    truncate: typeof block.truncate === "boolean" ? block.truncate : undefined,
  };
}
