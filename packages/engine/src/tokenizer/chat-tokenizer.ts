import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type GenMessage, parseToolCall, type ToolCallSyntax } from "@arc/core";
import { Template } from "@huggingface/jinja";
import { Tokenizer } from "@huggingface/tokenizers";
import { hermesFormat } from "../server/tool-calls/tool-call-format.ts";
import { decodeTokens, encodeText, STOP_IDS, tokenTextBytes } from "./byte-tokenizer.ts";
import { renderChat, renderChatExample } from "./chat-template.ts";
import { byteToUnicode, readTokenizerFiles } from "./tokenizer-files.ts";

/** A message in OpenAI's chat format as a chat template reads it (tool calls and tool results included). */
export type TemplateMessage = GenMessage;

/** How to render a conversation. */
export interface RenderOptions {
  /** End with the opening of the assistant's turn (default true). */
  addGenerationPrompt?: boolean;
  /** OpenAI `tools` (`{type: "function", function: {name, description, parameters}}`), for templates that render them. */
  tools?: readonly object[];
}

/** A model's tokenizer and chat template: what turns chat messages into the token ids it was trained on. */
export interface ChatTokenizer {
  /** `byte` (Arc's byte-level tokenizer and template) or `hf` (a `tokenizer.json` and a Jinja chat template). */
  readonly kind: "byte" | "hf";
  render(messages: readonly TemplateMessage[], options?: RenderOptions): number[];
  encode(text: string): number[];
  /** The text of `ids`, special tokens left out. */
  decode(ids: readonly number[]): string;
  /** Tokens that end a turn (generation stops at them). */
  readonly stopIds: ReadonlySet<number>;
  /** How the model writes tool calls, when its chat template writes them back in a format Arc can read. */
  readonly toolCallSyntax?: ToolCallSyntax;
  /** The bytes a token writes, or null for a special token (constrained decoding reads the vocabulary through this). */
  tokenBytes(id: number): Uint8Array | null;
  /** A prompt and its assistant reply as training tokens; the reply ends with the token that ends a turn. */
  renderExample(
    messages: readonly TemplateMessage[],
    reply: string,
    options?: RenderOptions,
  ): { promptTokens: number[]; outputTokens: number[] };
}

/** Arc's byte-level tokenizer and its fixed template (tools are not rendered: the byte models never saw them). */
export const byteChatTokenizer: ChatTokenizer = {
  kind: "byte",
  render: (messages, options) => renderChat(messages, options),
  encode: (text) => encodeText(text),
  decode: (ids) => decodeTokens([...ids]),
  stopIds: STOP_IDS,
  toolCallSyntax: "arc-json",
  tokenBytes: tokenTextBytes,
  renderExample: (messages, reply) => renderChatExample(messages, reply),
};

/** A JSON file's object, or undefined when the file does not exist. */
async function readJson(path: string): Promise<Record<string, unknown> | undefined> {
  let raw: string;
  try {
    raw = await readFile(path, "utf8");
  } catch {
    return undefined;
  }
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new Error(`${path}: not valid JSON (${(error as Error).message})`);
  }
}

/** A special token's text as tokenizer_config.json gives it: a string, or `{content}` (AddedToken). */
function tokenText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (value && typeof value === "object" && typeof (value as { content?: unknown }).content === "string")
    return (value as { content: string }).content;
  return undefined;
}

/** The `default` chat template: a string, or the one named `default` in a list of named templates. */
function chatTemplateOf(config: Record<string, unknown>): string | undefined {
  const template = config.chat_template;
  if (typeof template === "string") return template;
  if (Array.isArray(template))
    return (template as { name?: string; template?: string }[]).find((t) => t.name === "default")?.template;
  return undefined;
}

/**
 * The bytes each id of a `tokenizer.json` writes: byte-level BPE keys through the GPT-2 byte map, SentencePiece keys
 * with `▁` as a space and `<0xNN>` byte fallbacks; added tokens that are special write none.
 */
function vocabularyBytes(json: Record<string, unknown>): Map<number, Uint8Array | null> {
  const model = json.model as { vocab?: Record<string, number> | [string, number][] } | undefined;
  const entries: [string, number][] = Array.isArray(model?.vocab)
    ? model.vocab.map(([piece], id) => [piece, id])
    : Object.entries(model?.vocab ?? {});
  const byteLevel = JSON.stringify([json.pre_tokenizer, json.decoder]).includes('"ByteLevel"');
  const unicodeToByte = new Map(byteToUnicode().map((ch, b) => [ch, b]));
  const encoder = new TextEncoder();
  const table = new Map<number, Uint8Array | null>();
  for (const [piece, id] of entries) {
    if (byteLevel) {
      const bytes = [...piece].map((ch) => unicodeToByte.get(ch));
      table.set(
        id,
        bytes.every((b) => b !== undefined) ? Uint8Array.from(bytes as number[]) : encoder.encode(piece),
      );
    } else {
      const fallback = /^<0x([0-9A-Fa-f]{2})>$/.exec(piece);
      table.set(
        id,
        fallback ? Uint8Array.of(Number.parseInt(fallback[1], 16)) : encoder.encode(piece.replace(/▁/g, " ")),
      );
    }
  }
  for (const added of (json.added_tokens as
    | { id: number; content: string; special?: boolean }[]
    | undefined) ?? [])
    table.set(added.id, added.special ? null : encoder.encode(added.content));
  return table;
}

/** A Hugging Face tokenizer (`tokenizer.json`) with the Jinja chat template of its `tokenizer_config.json`. */
class HfChatTokenizer implements ChatTokenizer {
  readonly kind = "hf";
  private readonly template: Template | undefined;
  /** The token that ends a turn: the config's eos token, when it is one token. */
  readonly endOfTurn: number | undefined;
  /**
   * Hermes when the template writes calls in `<tool_call>` tags (Qwen2.5, Hermes), Arc's JSON when it writes them as
   * `{"tool":name,"args":...}` (the shipped BPE model), else none.
   */
  readonly toolCallSyntax: ToolCallSyntax | undefined;

  constructor(
    private readonly dir: string,
    private readonly tokenizer: Tokenizer,
    private readonly config: Record<string, unknown>,
    readonly stopIds: ReadonlySet<number>,
    private readonly bytes: Map<number, Uint8Array | null>,
  ) {
    const source = chatTemplateOf(config);
    this.template = source === undefined ? undefined : new Template(source);
    this.toolCallSyntax = source?.includes("<tool_call>")
      ? "hermes"
      : source?.includes(`'{"tool":'`)
        ? "arc-json"
        : undefined;
    const eos = tokenText(config.eos_token);
    this.endOfTurn = eos === undefined ? undefined : this.tokenId(eos);
  }

  private tokenId(text: string): number | undefined {
    const ids = this.tokenizer.encode(text, { add_special_tokens: false }).ids;
    return ids.length === 1 ? ids[0] : undefined;
  }

  render(messages: readonly TemplateMessage[], options: RenderOptions = {}): number[] {
    if (!this.template)
      throw new TypeError(
        `${this.dir}/tokenizer_config.json: no chat_template, so chat messages cannot be rendered`,
      );
    const text = this.template.render({
      messages: messages as unknown as Record<string, unknown>[],
      tools: options.tools ?? null,
      add_generation_prompt: options.addGenerationPrompt ?? true,
      bos_token: tokenText(this.config.bos_token) ?? "",
      eos_token: tokenText(this.config.eos_token) ?? "",
    });
    return this.encode(text);
  }

  tokenBytes(id: number): Uint8Array | null {
    return this.bytes.get(id) ?? null;
  }

  encode(text: string): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  decode(ids: readonly number[]): string {
    return ids.length === 0 ? "" : this.tokenizer.decode([...ids], { skip_special_tokens: true });
  }

  renderExample(messages: readonly TemplateMessage[], reply: string, options: RenderOptions = {}) {
    if (this.endOfTurn === undefined)
      throw new TypeError(
        `${this.dir}/tokenizer_config.json: eos_token is not one token, so a training reply cannot end its turn`,
      );
    return {
      promptTokens: this.render(messages, { ...options, addGenerationPrompt: true }),
      outputTokens: [...this.encode(this.replyText(reply)), this.endOfTurn],
    };
  }

  /**
   * A reply as this model writes it. Families and verifiers write a tool call as Arc's answer text
   * (`{"tool":...,"args":...}`); a model whose template writes Hermes tags learns it in those tags, exactly as the tool
   * grammar makes it write a call when it is served.
   */
  private replyText(reply: string): string {
    if (this.toolCallSyntax !== "hermes") return reply;
    const parsed = parseToolCall(reply);
    return parsed.ok ? hermesFormat.write(parsed.call.tool, JSON.stringify(parsed.call.args)) : reply;
  }
}

/** Every id in an `eos_token_id` field (a number or a list). */
function eosIds(value: unknown): number[] {
  if (typeof value === "number") return [value];
  return Array.isArray(value) ? value.filter((x): x is number => typeof x === "number") : [];
}

/**
 * The chat tokenizer of a checkpoint directory: Arc's byte-level one when its tokenizer files are Arc's (or absent),
 * else its `tokenizer.json` and `tokenizer_config.json`. Turns end at the config's eos token and at every
 * `eos_token_id` of `generation_config.json` and `config.json`.
 */
export async function loadChatTokenizer(dir: string): Promise<ChatTokenizer> {
  const { foreign } = await readTokenizerFiles(dir);
  if (!foreign) return byteChatTokenizer;
  const json = await readJson(join(dir, "tokenizer.json"));
  if (!json) throw new Error(`${dir}/tokenizer.json: not found`);
  const config = (await readJson(join(dir, "tokenizer_config.json"))) ?? {};
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(json, config);
  } catch (error) {
    throw new Error(
      `${dir}/tokenizer.json: cannot be read as a Hugging Face tokenizer (${(error as Error).message})`,
    );
  }
  const stops = new Set<number>([
    ...eosIds((await readJson(join(dir, "generation_config.json")))?.eos_token_id),
    ...eosIds((await readJson(join(dir, "config.json")))?.eos_token_id),
  ]);
  const hf = new HfChatTokenizer(dir, tokenizer, config, stops, vocabularyBytes(json));
  if (hf.endOfTurn !== undefined) stops.add(hf.endOfTurn);
  return hf;
}
