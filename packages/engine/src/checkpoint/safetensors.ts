/**
 * Reader and writer for the safetensors format: an 8-byte little-endian header length, a JSON header
 * `{name: {dtype, shape, data_offsets: [begin, end]}, __metadata__?: {...}}`, then the raw little-endian data.
 * Tensors come back as float32 whatever their stored dtype (F32, F16, BF16).
 */
import { readFile, writeFile } from "node:fs/promises";
import { CheckpointError } from "./checkpoint-error.ts";

/** Storage dtypes this engine reads and writes. */
export type SafetensorsDtype = "F32" | "F16" | "BF16";

/** A float32 tensor with its shape. */
export interface NamedTensor {
  shape: number[];
  data: Float32Array;
}

const BYTES: Record<SafetensorsDtype, number> = { F32: 4, F16: 2, BF16: 2 };

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float32 -> bfloat16 bits, round to nearest even (NaN stays NaN). */
export function toBf16Bits(x: number): number {
  f32[0] = x;
  const bits = u32[0];
  if ((bits & 0x7fffffff) > 0x7f800000) return (bits >>> 16) | 0x40;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

/** bfloat16 bits -> float32. */
export function fromBf16Bits(h: number): number {
  u32[0] = h << 16;
  return f32[0];
}

/** float32 -> IEEE half bits, round to nearest even, overflow to infinity. */
export function toF16Bits(x: number): number {
  f32[0] = x;
  const bits = u32[0];
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    let m = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    if (rest > half || (rest === half && m & 1)) m++;
    return sign | m;
  }
  let m = mant >>> 13;
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && m & 1)) {
    m++;
    if (m === 0x400) {
      m = 0;
      e++;
      if (e >= 0x1f) return sign | 0x7c00;
    }
  }
  return sign | (e << 10) | m;
}

/** IEEE half bits -> float32. */
export function fromF16Bits(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** Serialises tensors (in the given order) to safetensors bytes, converting to `dtype`. */
export function encodeSafetensors(
  tensors: Map<string, NamedTensor>,
  options: { dtype?: SafetensorsDtype; metadata?: Record<string, string> } = {},
): Uint8Array {
  const dtype = options.dtype ?? "F32";
  const header: Record<string, unknown> = { __metadata__: options.metadata ?? { format: "pt" } };
  let offset = 0;
  for (const [name, t] of tensors) {
    const size = t.data.length * BYTES[dtype];
    header[name] = { dtype, shape: t.shape, data_offsets: [offset, offset + size] };
    offset += size;
  }
  let json = JSON.stringify(header);
  json += " ".repeat((8 - (json.length % 8)) % 8); // align the data to 8 bytes, as the reference writer does
  const headerBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let pos = 8 + headerBytes.length;
  for (const t of tensors.values()) {
    if (dtype === "F32") {
      for (let i = 0; i < t.data.length; i++, pos += 4) view.setFloat32(pos, t.data[i], true);
    } else {
      const conv = dtype === "F16" ? toF16Bits : toBf16Bits;
      for (let i = 0; i < t.data.length; i++, pos += 2) view.setUint16(pos, conv(t.data[i]), true);
    }
  }
  return out;
}

/** Parses safetensors bytes; `file` names the source in errors (corrupt header, bad offsets, unknown dtype). */
export function decodeSafetensors(bytes: Uint8Array, file = "safetensors"): Map<string, NamedTensor> {
  if (bytes.length < 8)
    throw new CheckpointError(
      `${file}: corrupt safetensors file: ${bytes.length} bytes, expected at least 8`,
      { file },
    );
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLen = Number(view.getBigUint64(0, true));
  if (headerLen <= 0 || 8 + headerLen > bytes.length) {
    throw new CheckpointError(
      `${file}: corrupt safetensors header: length ${headerLen} does not fit in ${bytes.length} bytes`,
      { file },
    );
  }
  let header: Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLen)));
  } catch (error) {
    throw new CheckpointError(`${file}: corrupt safetensors header: ${(error as Error).message}`, {
      file,
      cause: error,
    });
  }
  const base = 8 + headerLen;
  const out = new Map<string, NamedTensor>();
  for (const [name, entry] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    const dtype = entry?.dtype as SafetensorsDtype;
    if (!(dtype in BYTES))
      throw new CheckpointError(
        `${file}: tensor ${name}: unsupported dtype ${JSON.stringify(entry?.dtype)}, expected F32, F16 or BF16`,
        { file, tensor: name },
      );
    const count = (entry.shape ?? []).reduce((a, b) => a * b, 1);
    const [begin, end] = entry.data_offsets ?? [];
    if (!Number.isInteger(begin) || end - begin !== count * BYTES[dtype] || base + end > bytes.length) {
      throw new CheckpointError(
        `${file}: tensor ${name}: data_offsets ${JSON.stringify(entry.data_offsets)} do not match shape ${JSON.stringify(entry.shape)} (${dtype}) within a file of ${bytes.length} bytes`,
        { file, tensor: name },
      );
    }
    const data = new Float32Array(count);
    let pos = base + begin;
    if (dtype === "F32") for (let i = 0; i < count; i++, pos += 4) data[i] = view.getFloat32(pos, true);
    else {
      const conv = dtype === "F16" ? fromF16Bits : fromBf16Bits;
      for (let i = 0; i < count; i++, pos += 2) data[i] = conv(view.getUint16(pos, true));
    }
    out.set(name, { shape: entry.shape, data });
  }
  return out;
}

/** Writes tensors to a `.safetensors` file. */
export async function writeSafetensors(
  path: string,
  tensors: Map<string, NamedTensor>,
  options: { dtype?: SafetensorsDtype; metadata?: Record<string, string> } = {},
): Promise<void> {
  await writeFile(path, encodeSafetensors(tensors, options));
}

/** Reads a `.safetensors` file into float32 tensors. */
export async function readSafetensors(path: string): Promise<Map<string, NamedTensor>> {
  return decodeSafetensors(new Uint8Array(await readFile(path)), path);
}
