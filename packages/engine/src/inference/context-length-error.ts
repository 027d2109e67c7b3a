/** A prompt that leaves the model no room to reply; servers answer it as OpenAI's `context_length_exceeded`. */
export class ContextLengthError extends TypeError {
  constructor(
    readonly field: string,
    readonly promptTokens: number,
    readonly contextTokens: number,
  ) {
    super(`${field}: a prompt of ${promptTokens} tokens leaves no room in the context of ${contextTokens}`);
    this.name = "ContextLengthError";
  }
}
