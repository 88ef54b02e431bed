import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DOCUMENTED_SERVICES, writeServiceDocuments, type DocumentedService } from './openapi-documents.js';

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '..');
const bin = (name: string) => path.join(repoRoot, 'node_modules', '.bin', name);
// Neither linter may reach the network: no usage report, no update check.
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };

/** Runs a linter that exits non-zero on errors; its JSON report is on stdout either way. */
async function report(file: string, args: string[]): Promise<string> {
  try {
    return (await run(file, args, { cwd: repoRoot, env, maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (error) {
    const { stdout } = error as { stdout?: string };
    if (!stdout) throw error;
    return stdout;
  }
}

let dir: string;
let documents: Record<DocumentedService, string>;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'openapi-lint-'));
  documents = await writeServiceDocuments(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('every OpenAPI document lints clean (redocly.yaml, .spectral.yaml: warnings listed there)', () => {
  it.each(DOCUMENTED_SERVICES)('%s: Redocly reports no error', async (service) => {
    const out = await report(bin('redocly'), ['lint', documents[service], '--config', 'redocly.yaml', '--format=json']);
    const { problems } = JSON.parse(out) as { problems: { severity: string; ruleId: string; message: string }[] };
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message}`);
    expect(errors).toEqual([]);
  });

  it.each(DOCUMENTED_SERVICES)('%s: Spectral reports no error', async (service) => {
    const out = await report(bin('spectral'), ['lint', documents[service], '-r', '.spectral.yaml', '-f', 'json']);
    const results = JSON.parse(out) as { severity: number; code: string; message: string; path: string[] }[];
    const errors = results.filter((r) => r.severity === 0).map((r) => `${r.code} at ${r.path.join('.')}: ${r.message}`);
    expect(errors).toEqual([]);
  });
});
