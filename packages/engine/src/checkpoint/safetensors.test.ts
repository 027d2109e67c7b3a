import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CheckpointError } from "./checkpoint-error.ts";
import {
  decodeSafetensors,
  encodeSafetensors,
  fromBf16Bits,
  fromF16Bits,
  toBf16Bits,
  toF16Bits,
} from "./safetensors.ts";

const sample = new Map([
  ["a.weight", { shape: [2, 3], data: Float32Array.from([0, 1, -2.5, 1e-3, 65504, -0.1]) }],
  ["b", { shape: [1], data: Float32Array.from([Math.PI]) }],
]);

describe("safetensors", () => {
  it("round-trips float32 tensors bit-exactly, with an 8-byte-aligned header", () => {
    const bytes = encodeSafetensors(sample);
    const headerLen = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    assert.equal(headerLen % 8, 0);
    const back = decodeSafetensors(bytes);
    assert.deepEqual([...back.keys()], ["a.weight", "b"]);
    assert.deepEqual(back.get("a.weight")!.data, sample.get("a.weight")!.data);
    assert.deepEqual(back.get("b")!.shape, [1]);
  });

  it("stores F16 and BF16 with round-to-nearest and reads them back as float32", () => {
    assert.equal(toF16Bits(1), 0x3c00);
    assert.equal(toF16Bits(-2), 0xc000);
    assert.equal(toF16Bits(65504), 0x7bff);
    assert.equal(toF16Bits(1e6), 0x7c00);
    assert.equal(fromF16Bits(0x3555), 0.333251953125);
    assert.equal(toBf16Bits(1), 0x3f80);
    assert.equal(fromBf16Bits(toBf16Bits(Math.PI)), 3.140625);
    for (const dtype of ["F16", "BF16"] as const) {
      const back = decodeSafetensors(encodeSafetensors(sample, { dtype })).get("a.weight")!.data;
      for (const [i, x] of sample.get("a.weight")!.data.entries()) {
        assert.ok(Math.abs(back[i] - x) <= Math.abs(x) * 2 ** -7 + 1e-6, `${dtype} ${x} -> ${back[i]}`);
      }
    }
  });

  it("rejects a corrupt header, naming the file", () => {
    const bytes = encodeSafetensors(sample);
    bytes[10] = 0x7b; // break the JSON
    bytes[12] = 0x00;
    assert.throws(
      () => decodeSafetensors(bytes, "x.safetensors"),
      /x\.safetensors: corrupt safetensors header/,
    );
    assert.throws(() => decodeSafetensors(new Uint8Array(4), "y.safetensors"), /y\.safetensors: corrupt/);
  });

  it("rejects offsets that do not match the shape, naming the tensor", () => {
    const bytes = encodeSafetensors(sample);
    const truncated = bytes.slice(0, bytes.length - 4);
    assert.throws(
      () => decodeSafetensors(truncated, "z.safetensors"),
      /z\.safetensors: tensor b: data_offsets/,
    );
    assert.throws(
      () => decodeSafetensors(truncated, "z.safetensors"),
      (error: unknown) =>
        error instanceof CheckpointError && error.file === "z.safetensors" && error.tensor === "b",
    );
  });
});
