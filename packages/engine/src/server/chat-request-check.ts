import { CHAT_COMPLETION_PARAMETERS, unrecognizedArguments } from "./openai-parameters.ts";

/**
 * Why a chat completion body is refused: OpenAI's `param` and `code`, and a message that names the field (an
 * unrecognized argument has neither param nor code, as OpenAI answers it).
 */
export interface ChatRequestProblem {
  param: string | null;
  code: "invalid_type" | "invalid_value" | null;
  message: string;
}

/** What a JSON value is, for messages: `null`, `an array`, `string`, `number`... */
const typeName = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const absent = (value: unknown): boolean => value === undefined || value === null;

/** Numeric parameters with OpenAI's ranges; token counts up to int32 (what model servers parse), seeds exact in JSON. */
const NUMBERS: [key: string, min: number, max: number, integer: boolean][] = [
  ["temperature", 0, 2, false],
  ["top_p", 0, 1, false],
  ["presence_penalty", -2, 2, false],
  ["frequency_penalty", -2, 2, false],
  ["n", 1, 128, true],
  ["max_tokens", 1, 2 ** 31 - 1, true],
  ["max_completion_tokens", 1, 2 ** 31 - 1, true],
  ["top_logprobs", 0, 20, true],
  ["seed", Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true],
];

const STRINGS = [
  "user",
  "cache_salt",
  "prompt_cache_key",
  "prompt_cache_retention",
  "reasoning_effort",
  "safety_identifier",
  "service_tier",
  "verbosity",
];
/** The longest `user`, as `POST /v1/traces` bounds a trace's userId. */
const MAX_USER = 256;
const BOOLEANS = ["stream", "logprobs", "parallel_tool_calls", "store"];
const OBJECTS = [
  "stream_options",
  "response_format",
  "logit_bias",
  "metadata",
  "audio",
  "moderation",
  "prediction",
  "prompt_cache_options",
  "web_search_options",
];
/** OpenAI's bound on a `logit_bias` value. */
const MAX_BIAS = 100;

function checkMessage(message: unknown, i: number): ChatRequestProblem | null {
  const at = `messages[${i}]`;
  if (!isObject(message)) {
    return {
      param: at,
      code: "invalid_type",
      message: `${at}: expected a message object, got ${typeName(message)}`,
    };
  }
  if (typeof message.role !== "string") {
    return {
      param: `${at}.role`,
      code: "invalid_type",
      message: `${at}.role: expected a string, got ${typeName(message.role)}`,
    };
  }
  const { content } = message;
  if (Array.isArray(content)) {
    for (let j = 0; j < content.length; j++) {
      const part = content[j];
      const partAt = `${at}.content[${j}]`;
      if (!isObject(part) || typeof part.type !== "string") {
        return {
          param: partAt,
          code: "invalid_type",
          message: `${partAt}: expected a content part object with a string type, got ${typeName(part)}`,
        };
      }
      if (part.type === "text" && typeof part.text !== "string") {
        return {
          param: `${partAt}.text`,
          code: "invalid_type",
          message: `${partAt}.text: expected a string, got ${typeName(part.text)}`,
        };
      }
    }
  } else if (!absent(content) && typeof content !== "string") {
    return {
      param: `${at}.content`,
      code: "invalid_type",
      message: `${at}.content: expected a string, an array of content parts or null, got ${typeName(content)}`,
    };
  }
  for (const key of ["name", "tool_call_id"]) {
    if (!absent(message[key]) && typeof message[key] !== "string") {
      return {
        param: `${at}.${key}`,
        code: "invalid_type",
        message: `${at}.${key}: expected a string, got ${typeName(message[key])}`,
      };
    }
  }
  return checkObjectList(message.tool_calls, `${at}.tool_calls`, "tool call");
}

function checkObjectList(value: unknown, param: string, what: string): ChatRequestProblem | null {
  if (absent(value)) return null;
  if (!Array.isArray(value)) {
    return {
      param,
      code: "invalid_type",
      message: `${param}: expected an array of ${what} objects, got ${typeName(value)}`,
    };
  }
  const bad = value.findIndex((item) => !isObject(item));
  if (bad < 0) return null;
  return {
    param: `${param}[${bad}]`,
    code: "invalid_type",
    message: `${param}[${bad}]: expected a ${what} object, got ${typeName(value[bad])}`,
  };
}

/** `logit_bias`: token ids (non-negative integers, as text) to numbers from -100 to 100, as OpenAI takes it. */
function checkLogitBias(bias: unknown): ChatRequestProblem | null {
  if (!isObject(bias)) return null;
  for (const [key, value] of Object.entries(bias)) {
    if (!/^\d+$/.test(key)) {
      return {
        param: "logit_bias",
        code: "invalid_value",
        message: `logit_bias: invalid key ${JSON.stringify(key)}: expected a token id (a non-negative integer)`,
      };
    }
    if (typeof value !== "number" || !(Math.abs(value) <= MAX_BIAS)) {
      return {
        param: "logit_bias",
        code: "invalid_value",
        message: `logit_bias: the bias of token ${key}: expected a number from -${MAX_BIAS} to ${MAX_BIAS}, got ${JSON.stringify(value)}`,
      };
    }
  }
  return null;
}

/** `function_call`: "none", "auto" or `{"name"}`, as OpenAI's deprecated form of `tool_choice` takes it. */
function checkFunctionCall(value: unknown): ChatRequestProblem | null {
  if (absent(value) || value === "none" || value === "auto") return null;
  if (isObject(value) && typeof value.name === "string") return null;
  return {
    param: "function_call",
    code: "invalid_value",
    message: `function_call: expected "none", "auto" or {"name": string}, got ${JSON.stringify(value)}`,
  };
}

/** `modalities`: a list of output types (strings). */
function checkModalities(value: unknown): ChatRequestProblem | null {
  if (absent(value) || (Array.isArray(value) && value.every((m) => typeof m === "string"))) return null;
  return {
    param: "modalities",
    code: "invalid_type",
    message: `modalities: expected an array of strings, got ${typeName(value)}`,
  };
}

function checkStop(stop: unknown): ChatRequestProblem | null {
  if (absent(stop) || typeof stop === "string") return null;
  if (!Array.isArray(stop)) {
    return {
      param: "stop",
      code: "invalid_type",
      message: `stop: expected a string or an array of up to 4 strings, got ${typeName(stop)}`,
    };
  }
  if (stop.length > 4) {
    return {
      param: "stop",
      code: "invalid_value",
      message: `stop: expected up to 4 strings, got ${stop.length}`,
    };
  }
  const bad = stop.findIndex((s) => typeof s !== "string");
  if (bad < 0) return null;
  return {
    param: `stop[${bad}]`,
    code: "invalid_type",
    message: `stop[${bad}]: expected a string, got ${typeName(stop[bad])}`,
  };
}

/**
 * The first problem of a chat completion body (already a JSON object) that OpenAI would refuse with a 400, or null:
 * an argument OpenAI does not document (see `CHAT_COMPLETION_PARAMETERS`), a missing model, a field of the wrong
 * shape or out of range. Checks shapes and ranges only, one pass over the messages and their parts without copying
 * them: what a model server supports beyond that (roles, part types, context length, parameters it cannot honour)
 * is left to it. The gateway and `arc engine serve` both answer with it.
 */
export function checkChatRequest(body: Record<string, unknown>): ChatRequestProblem | null {
  const unrecognized = unrecognizedArguments(body, CHAT_COMPLETION_PARAMETERS);
  if (unrecognized) return { param: null, code: null, message: unrecognized };
  if (typeof body.model !== "string" || body.model.length === 0) {
    return {
      param: "model",
      code: absent(body.model) || typeof body.model === "string" ? "invalid_value" : "invalid_type",
      message: `model: expected the id of a model (a non-empty string), got ${JSON.stringify(body.model) ?? "none"}`,
    };
  }
  const { messages } = body;
  if (!Array.isArray(messages) || messages.length === 0) {
    return {
      param: "messages",
      code: "invalid_value",
      message: `messages: expected a non-empty array of chat messages, got ${Array.isArray(messages) ? "an empty array" : typeName(messages)}`,
    };
  }
  for (let i = 0; i < messages.length; i++) {
    const problem = checkMessage(messages[i], i);
    if (problem) return problem;
  }
  for (const [key, min, max, integer] of NUMBERS) {
    const value = body[key];
    if (absent(value)) continue;
    if (typeof value !== "number") {
      return {
        param: key,
        code: "invalid_type",
        message: `${key}: expected a number, got ${typeName(value)}`,
      };
    }
    if (!(value >= min && value <= max) || (integer && !Number.isInteger(value))) {
      return {
        param: key,
        code: "invalid_value",
        message: `${key}: expected ${integer ? "an integer" : "a number"} from ${min} to ${max}, got ${value}`,
      };
    }
  }
  for (const [keys, type, expected] of [
    [STRINGS, "string", "a string"],
    [BOOLEANS, "boolean", "true or false"],
  ] as const) {
    for (const key of keys) {
      if (!absent(body[key]) && typeof body[key] !== type) {
        return {
          param: key,
          code: "invalid_type",
          message: `${key}: expected ${expected}, got ${typeName(body[key])}`,
        };
      }
    }
  }
  if (typeof body.user === "string" && body.user.length > MAX_USER) {
    return {
      param: "user",
      code: "invalid_value",
      message: `user: expected at most ${MAX_USER} characters (it is the trace's userId), got ${body.user.length}`,
    };
  }
  if (body.cache_salt === "") {
    return { param: "cache_salt", code: "invalid_value", message: "cache_salt: expected a non-empty string" };
  }
  for (const key of OBJECTS) {
    if (!absent(body[key]) && !isObject(body[key])) {
      return {
        param: key,
        code: "invalid_type",
        message: `${key}: expected an object, got ${typeName(body[key])}`,
      };
    }
  }
  return (
    checkStop(body.stop) ??
    checkLogitBias(body.logit_bias) ??
    checkModalities(body.modalities) ??
    checkFunctionCall(body.function_call) ??
    checkObjectList(body.tools, "tools", "tool") ??
    checkObjectList(body.functions, "functions", "function")
  );
}
