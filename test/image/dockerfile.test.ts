/**
 * The root Dockerfile, checked where no image can be built too: dockerfile-utils finds no problem in it, its base
 * images are build args with defaults, every stage that runs npm or node declares the CA-bundle build arg (build args
 * do not cross stages), the default target is the CPU image, and it runs `argus` as a numeric non-root user.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { validate } from 'dockerfile-utils';
import { REPO_ROOT } from '../support/argus-process.js';

interface Stage {
  from: string;
  name?: string;
  instructions: string[];
}

/** The Dockerfile's instructions (continuation lines joined, comments dropped), grouped by stage. */
function stages(text: string): { globalArgs: string[]; stages: Stage[] } {
  const instructions = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const result: { globalArgs: string[]; stages: Stage[] } = { globalArgs: [], stages: [] };
  for (const instruction of instructions) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(instruction);
    if (from) result.stages.push({ from: from[1], name: from[2], instructions: [] });
    else if (result.stages.length === 0) result.globalArgs.push(instruction);
    else result.stages.at(-1)!.instructions.push(instruction);
  }
  return result;
}

describe('Dockerfile', () => {
  let text: string;
  let parsed: ReturnType<typeof stages>;

  beforeAll(async () => {
    text = await readFile(path.join(REPO_ROOT, 'Dockerfile'), 'utf8');
    parsed = stages(text);
  });

  it('has no problem dockerfile-utils reports', () => {
    expect(validate(text)).toEqual([]);
  });

  it('takes every base image as a build arg with a default, or from an earlier stage', () => {
    const defaults = new Map(
      parsed.globalArgs.map((arg) => /^ARG\s+(\w+)=(\S+)/.exec(arg)).flatMap((m) => (m ? [[m[1], m[2]]] : [])),
    );
    const names = new Set<string>();
    for (const stage of parsed.stages) {
      const arg = /^\$\{(\w+)\}$/.exec(stage.from)?.[1];
      if (arg) expect(defaults.get(arg)).toBeTruthy();
      else expect(names.has(stage.from)).toBe(true);
      if (stage.name) names.add(stage.name);
    }
    expect(defaults.get('BUILD_IMAGE')).toBe('node:20-bookworm-slim');
  });

  it('declares NODE_EXTRA_CA_CERTS in every stage that runs npm or node (build args do not cross stages)', () => {
    const running = parsed.stages.filter((s) => s.instructions.some((i) => /^RUN\b.*\b(npm|node)\b/.test(i)));
    expect(running.map((s) => s.name)).toEqual(['build', 'build-cuda']);
    for (const stage of running) expect(stage.instructions).toContain('ARG NODE_EXTRA_CA_CERTS');
  });

  it('builds the CPU image by default and runs argus as a numeric non-root user', () => {
    const last = parsed.stages.at(-1)!;
    expect(last.name).toBe('runtime');
    const app = parsed.stages.find((s) => s.name === last.from)!;
    expect(app.instructions).toContain('USER 10001:10001');
    expect(app.instructions).toContain('ENTRYPOINT ["argus"]');
  });
});
