import type { GenerateOptions, GenRequest, GenResult, TokenEvent } from "@arc/core";
import { GrammarError } from "../grammar/grammar-bounds.ts";
import type { GrammarProgram } from "../grammar/grammar-program.ts";
import { stableLength } from "../inference/stable-text.ts";
import type { ChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import { type TorchWorker, TorchWorkerError } from "./torch-worker.ts";

/**
 * A request as the worker takes it: token ids and sampling settings, no chat messages or signals, and the grammar
 * compiled to its program (grammar-program.ts), which the worker follows as the embedded engine does.
 */
export type WireRequest = Omit<GenRequest, "messages" | "tools" | "signal" | "grammar"> & {
  id: string;
  grammar?: GrammarProgram;
};

/** What the worker streams for one row after a decoding step (python/PROTOCOL.md, `generate` with `stream`). */
interface WireTokenEvent {
  /** The request's index in the worker call, and the sample's index in the request. */
  i: number;
  s: number;
  token?: number;
  logprob?: number;
  version?: number;
  top?: { token: number; logprob: number }[];
  finish?: TokenEvent["finishReason"];
  /** The sample's final text, on its last event. */
  text?: string;
}

/** One caller's `generate`, waiting for the worker. */
interface QueuedCall {
  requests: GenRequest[];
  wire: WireRequest[];
  options: GenerateOptions;
  resolve: (results: GenResult[]) => void;
  reject: (error: Error) => void;
  /** Set once a token of this call was handed to its listener: such a call is never run twice. */
  streamed: boolean;
}

/** A streamed sample: its tokens so far and how much of its text the listener has. */
interface StreamedSample {
  tokens: number[];
  emitted: number;
  last: { token: number; logprob: number; version: number };
  done: boolean;
}

/**
 * Runs the `generate` calls made while the worker is busy as one worker call: every sample draws from its own seeded
 * generator, so its tokens do not depend on the rows it shares a batch with. Streams tokens to the calls that
 * listen, and hands each call its own results. A call waits for the batch in hand to end before its own starts.
 */
export class GenerationQueue {
  private readonly waiting: QueuedCall[] = [];
  private busy = false;

  constructor(
    private readonly worker: TorchWorker,
    private readonly tokenizer: ChatTokenizer,
  ) {}

  /** Queues one call; its results come back in request order then sample order. */
  submit(requests: GenRequest[], wire: WireRequest[], options: GenerateOptions): Promise<GenResult[]> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ requests, wire, options, resolve, reject, streamed: false });
      this.drain();
    });
  }

  private drain(): void {
    if (this.busy || this.waiting.length === 0) return;
    this.busy = true;
    // the calls made in this turn of the event loop go together
    setImmediate(() => {
      const calls = this.waiting.splice(0);
      this.runBatch(calls).finally(() => {
        this.busy = false;
        this.drain();
      });
    });
  }

  private async runBatch(calls: QueuedCall[]): Promise<void> {
    try {
      const results = await this.runTogether(calls);
      calls.forEach((call, k) => {
        const answer = results[k];
        if (answer instanceof Error) call.reject(answer);
        else call.resolve(answer);
      });
    } catch (error) {
      // a request the worker refuses fails its whole batch: the calls that heard nothing yet run alone, so each
      // gets its own answer
      const alone = error instanceof TorchWorkerError && calls.length > 1;
      for (const call of calls) {
        if (!alone || call.streamed) call.reject(error as Error);
        else
          await this.runTogether([call]).then(
            ([answer]) => (answer instanceof Error ? call.reject(answer) : call.resolve(answer)),
            (e: Error) => call.reject(e),
          );
      }
    }
  }

  /** One worker call for all of `calls`; the results of each call, in their order, or the error its listener threw. */
  private async runTogether(calls: QueuedCall[]): Promise<(GenResult[] | Error)[]> {
    const merged: WireRequest[] = [];
    const owner: { call: number; index: number }[] = [];
    const mergedIndex = new Map<string, number>();
    calls.forEach((call, k) => {
      call.wire.forEach((w, index) => {
        const id = `${k}/${w.id}`;
        mergedIndex.set(id, merged.length);
        merged.push({ ...w, id });
        owner.push({ call: k, index });
      });
    });
    const streams = new Map<string, StreamedSample>();
    const listening = calls.some((c) => c.options.onToken);
    /** A listener that throws ends its own call with that error (its requests are cancelled), no other. */
    const failed = new Map<number, Error>();
    const onProgress = (events: unknown) => {
      for (const e of events as WireTokenEvent[]) {
        const k = owner[e.i]?.call;
        if (k === undefined || failed.has(k)) continue;
        try {
          this.stream(calls, owner, streams, e);
        } catch (error) {
          failed.set(k, error as Error);
          for (const w of merged.filter((_, j) => owner[j].call === k))
            this.worker.cancelRequest(callId, w.id);
        }
      }
    };
    const callId = this.worker.peekNextId();
    const reply = this.worker.call<GenResult[]>(
      "generate",
      { requests: merged, ...(listening ? { stream: true } : {}) },
      undefined,
      listening ? onProgress : undefined,
    );
    const detach = this.cancelOnAbort(calls, merged, owner, callId);
    try {
      const results = await reply;
      const perCall: (GenResult[] | Error)[] = calls.map((_, k) => failed.get(k) ?? []);
      for (const result of results) {
        const at = mergedIndex.get(result.requestId ?? "");
        if (at === undefined)
          throw new Error(`generate: the worker answered an unknown request ${result.requestId}`);
        const { call: k, index } = owner[at];
        const mine = perCall[k];
        if (mine instanceof Error) continue;
        const failed = (result as GenResult & { error?: { message: string } }).error;
        if (failed) {
          // a sample whose grammar failed fails its call; the others in the batch went on
          perCall[k] = new GrammarError(failed.message);
          continue;
        }
        const given = calls[k].requests[index].id;
        mine.push({ ...result, requestId: given });
        if (calls[k].options.onToken) {
          try {
            this.finishStream(calls[k], index, streams, at, result);
          } catch (error) {
            perCall[k] = error as Error;
          }
        }
      }
      return perCall;
    } finally {
      detach();
    }
  }

  /** Hands one streamed token to the listener of the call it belongs to. */
  private stream(
    calls: QueuedCall[],
    owner: { call: number; index: number }[],
    streams: Map<string, StreamedSample>,
    e: WireTokenEvent,
  ): void {
    const { call: k, index } = owner[e.i];
    const call = calls[k];
    const onToken = call.options.onToken;
    if (!onToken) return;
    const key = `${e.i}/${e.s}`;
    let sample = streams.get(key);
    if (!sample) {
      sample = { tokens: [], emitted: 0, last: { token: -1, logprob: 0, version: -1 }, done: false };
      streams.set(key, sample);
    }
    if (e.token !== undefined) {
      sample.tokens.push(e.token);
      sample.last = { token: e.token, logprob: e.logprob ?? 0, version: e.version ?? -1 };
    }
    const text = e.finish ? (e.text ?? "") : this.tokenizer.decode(sample.tokens);
    const safe = e.finish ? text.length : stableLength(text, call.requests[index].stop ?? []);
    const textDelta = text.slice(sample.emitted, Math.max(sample.emitted, safe));
    sample.emitted = Math.max(sample.emitted, safe);
    sample.done = e.finish !== undefined;
    call.streamed = true;
    onToken({
      requestIndex: index,
      sampleIndex: e.s,
      ...sample.last,
      textDelta,
      ...(e.finish ? { finishReason: e.finish } : {}),
      ...(e.top ? { topLogprobs: e.top } : {}),
    });
  }

  /** A sample the worker ended without a last event (its call was cancelled between steps): its listener hears it end. */
  private finishStream(
    call: QueuedCall,
    index: number,
    streams: Map<string, StreamedSample>,
    at: number,
    result: GenResult,
  ): void {
    const sample = streams.get(`${at}/${result.sampleIndex}`);
    if (sample?.done) return;
    const i = result.outputTokens.length - 1;
    call.options.onToken?.({
      requestIndex: index,
      sampleIndex: result.sampleIndex,
      token: result.outputTokens[i] ?? -1,
      logprob: result.outputLogprobs[i] ?? 0,
      version: result.outputVersions[i] ?? -1,
      textDelta: result.text.slice(sample?.emitted ?? 0),
      finishReason: result.finishReason,
    });
  }

  /** Cancels in the worker what each call's signals abort; returns the function that stops listening. */
  private cancelOnAbort(
    calls: QueuedCall[],
    merged: WireRequest[],
    owner: { call: number; index: number }[],
    callId: number,
  ): () => void {
    const listeners: { signal: AbortSignal; cancel: () => void }[] = [];
    const listen = (signal: AbortSignal | undefined, cancel: () => void) => {
      if (!signal) return;
      if (signal.aborted) cancel();
      else {
        signal.addEventListener("abort", cancel, { once: true });
        listeners.push({ signal, cancel });
      }
    };
    calls.forEach((call, k) => {
      const ids = merged.filter((_, j) => owner[j].call === k).map((w) => w.id);
      listen(call.options.signal, () => {
        for (const id of ids) this.worker.cancelRequest(callId, id);
      });
      call.requests.forEach((r, index) => {
        listen(r.signal, () => this.worker.cancelRequest(callId, `${k}/${call.wire[index].id}`));
      });
    });
    return () => {
      for (const { signal, cancel } of listeners) signal.removeEventListener("abort", cancel);
    };
  }
}
