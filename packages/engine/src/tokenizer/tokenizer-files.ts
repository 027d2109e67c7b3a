import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SPECIAL_TOKENS, VOCAB_SIZE } from "./byte-tokenizer.ts";
import { CHAT_TEMPLATE_JINJA } from "./chat-template.ts";

/**
 * The byte -> printable-character map that HF byte-level tokenizers use for their vocabulary keys
 * (printable Latin-1 bytes map to themselves, the rest to U+0100 upwards).
 */
export function byteToUnicode(): string[] {
  const keep = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const out: string[] = [];
  let next = 256;
  for (let b = 0; b < 256; b++) out.push(String.fromCharCode(keep(b) ? b : next++));
  return out;
}

/** `tokenizer.json` for the byte tokenizer: a BPE model with no merges over the 256 byte symbols, plus specials. */
export function tokenizerJson(): Record<string, unknown> {
  const vocab: Record<string, number> = {};
  byteToUnicode().forEach((ch, id) => {
    vocab[ch] = id;
  });
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((content, i) => ({
      id: 256 + i,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false },
    post_processor: null,
    decoder: { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges: [],
    },
  };
}

/** `tokenizer_config.json`, carrying the chat template the gateway and trainer render with. */
export function tokenizerConfigJson(): Record<string, unknown> {
  return {
    tokenizer_class: "PreTrainedTokenizerFast",
    bos_token: "<|bos|>",
    eos_token: "<|end|>",
    pad_token: "<|pad|>",
    unk_token: null,
    add_bos_token: false,
    add_eos_token: false,
    clean_up_tokenization_spaces: false,
    model_max_length: 1_000_000,
    chat_template: CHAT_TEMPLATE_JINJA,
  };
}

/** Writes `tokenizer.json` and `tokenizer_config.json` into `dir`. */
export async function writeTokenizerFiles(dir: string): Promise<void> {
  await writeFile(join(dir, "tokenizer.json"), JSON.stringify(tokenizerJson(), null, 2));
  await writeFile(join(dir, "tokenizer_config.json"), JSON.stringify(tokenizerConfigJson(), null, 2));
}

/**
 * Reads the tokenizer files of a checkpoint. `foreign` says why they are not this engine's byte tokenizer
 * (another vocabulary, e.g. a real Qwen2 checkpoint): such a model still loads and runs on token ids, but
 * text in and out needs its own tokenizer. A missing tokenizer.json counts as the byte tokenizer.
 */
export async function readTokenizerFiles(dir: string): Promise<{ chatTemplate: string; foreign?: string }> {
  const tokPath = join(dir, "tokenizer.json");
  let raw: string | undefined;
  try {
    raw = await readFile(tokPath, "utf8");
  } catch {
    raw = undefined;
  }
  let foreign: string | undefined;
  if (raw !== undefined) {
    let parsed: {
      model?: { vocab?: Record<string, number> };
      added_tokens?: { id: number; content: string }[];
    };
    try {
      parsed = JSON.parse(raw);
    } catch (error) {
      throw new Error(`${tokPath}: not valid JSON (${(error as Error).message})`);
    }
    const vocab = parsed.model?.vocab ?? {};
    const table = byteToUnicode();
    const bad = table.findIndex((ch, id) => vocab[ch] !== id);
    const size = Object.keys(vocab).length + (parsed.added_tokens?.length ?? 0);
    const special = SPECIAL_TOKENS.findIndex(
      (content, i) => parsed.added_tokens?.find((t) => t.content === content)?.id !== 256 + i,
    );
    if (bad >= 0) foreign = `${tokPath} is not the byte-level tokenizer (byte ${bad} is not id ${bad})`;
    else if (special >= 0)
      foreign = `${tokPath} is not the byte-level tokenizer (no ${SPECIAL_TOKENS[special]} at id ${256 + special})`;
    else if (size > VOCAB_SIZE)
      foreign = `${tokPath} is not the byte-level tokenizer (${size} tokens, expected ${VOCAB_SIZE})`;
  }
  let chatTemplate = CHAT_TEMPLATE_JINJA;
  try {
    const config = JSON.parse(await readFile(join(dir, "tokenizer_config.json"), "utf8"));
    if (typeof config.chat_template === "string") chatTemplate = config.chat_template;
  } catch {
    chatTemplate = CHAT_TEMPLATE_JINJA;
  }
  return foreign ? { chatTemplate, foreign } : { chatTemplate };
}
