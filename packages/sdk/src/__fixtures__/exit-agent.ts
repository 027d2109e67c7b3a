// An agent script that makes one traced call and ends, without calling shutdown() unless CALL_SHUTDOWN is set: the
// exit tests run it in a child process. ARC_URL / ARC_API_KEY configure Arc; PROVIDER_URL is the OpenAI-compatible test server.
import OpenAI from "openai";
import { createArc } from "../index.ts";

const arc = createArc({ exitFlushTimeoutMs: Number(process.env.EXIT_FLUSH_MS ?? 2000), onWarning: () => {} });
const client = arc.wrapOpenAI(new OpenAI({ baseURL: process.env.PROVIDER_URL, apiKey: "k", maxRetries: 0 }));
const answer = await arc.trace("exit-agent", () =>
  client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "bye" }] }),
);
console.log(JSON.stringify({ content: answer.choices[0]!.message.content }));
if (process.env.CALL_SHUTDOWN) await arc.shutdown();
