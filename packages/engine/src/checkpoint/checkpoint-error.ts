import { ArcError } from "@arc/core";

/**
 * A checkpoint, safetensors file or weight set that cannot be read or used as given (missing file, corrupt
 * header, unsupported architecture, a tensor missing or of the wrong shape). Status 400: the fix is in the
 * files the caller pointed at, so retrying the same call does not help.
 */
export class CheckpointError extends ArcError {
  /** The file or directory at fault, as named in the message (e.g. `<dir>/model.safetensors`); absent for in-memory tensors. */
  readonly file: string | undefined;
  /** The HF name of the tensor at fault (e.g. `model.layers.0.self_attn.q_proj.weight`), when one is. */
  readonly tensor: string | undefined;

  constructor(
    message: string,
    options: { file?: string; tensor?: string; statusCode?: number; cause?: unknown } = {},
  ) {
    super(message, { name: "CheckpointError", statusCode: options.statusCode ?? 400, cause: options.cause });
    this.file = options.file;
    this.tensor = options.tensor;
  }
}
