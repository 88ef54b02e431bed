// Runs inside the image (`podman exec … node /probe/probe.mjs`), whose network is loopback only: calls dataprep on
// 127.0.0.1. `health <port>`: exit 0 once health answers 200. `upload <port> <file>`: uploads the file, prints the
// status and the JSON answer.
/* global fetch, FormData, Blob */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import process from 'node:process';

const [command, port, file] = process.argv.slice(2);
const base = `http://127.0.0.1:${port}/v1/dataprep`;
if (command === 'health') {
  const response = await fetch(`${base}/health`).catch(() => undefined);
  process.exit(response?.status === 200 ? 0 : 1);
}
if (command === 'upload') {
  const form = new FormData();
  form.append('file', new Blob([await readFile(file)]), path.basename(file));
  const response = await fetch(`${base}/media/upload?bucket_name=image-test&frame_interval=5`, {
    method: 'POST',
    body: form,
  });
  process.stdout.write(`${JSON.stringify({ status: response.status, body: await response.json() })}\n`);
}
