export { byteTokenCounter } from "./byte-token-counter.ts";
export { ChatModelError } from "./chat-model-error.ts";
export { EngineChatModel, type EngineChatModelOptions } from "./engine-chat-model.ts";
export { OpenAIChatModel, type OpenAIChatModelOptions } from "./openai-chat-model.ts";
