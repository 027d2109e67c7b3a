// Runs several test files in one process, one after another: `node --import tsx [reporters] scripts/test-batch.mjs
// <file> ...`. scripts/test.mjs batches the files a full run found quick, so that each pays Node's and tsx's start and
// its imports once a batch, not once a file. Node's runner attributes each test to the file that declared it.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

for (const file of process.argv.slice(2)) await import(pathToFileURL(resolve(file)).href);
