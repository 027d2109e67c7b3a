export { EngineChatModel, type EngineChatModelOptions } from "@arc/core";
export { byteTokenCounter } from "./byte-token-counter.ts";
export { ChatModelError } from "./chat-model-error.ts";
export { OpenAIChatModel, type OpenAIChatModelOptions } from "./openai-chat-model.ts";
export { tokenizerTokenCounter } from "./tokenizer-token-counter.ts";
