/** Test doubles of an LLM provider with scripted answers and errors, and of the Arc server, which @arc/sdk may not import. */
export { CollectorTestServer, freePort } from "./collector-test-server.ts";
export { OpenAITestServer, type ScriptedReply } from "./openai-test-server.ts";
