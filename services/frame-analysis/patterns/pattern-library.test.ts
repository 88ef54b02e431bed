import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { loadPatternLibrary, PatternLibraryError } from './pattern-library.js';

async function libraryFile(text: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'patterns-'));
  const file = path.join(dir, 'patterns.yaml');
  await writeFile(file, text);
  return file;
}

async function problems(text: string): Promise<string[]> {
  const error = await loadPatternLibrary(await libraryFile(text)).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(PatternLibraryError);
  return (error as PatternLibraryError).problems;
}

describe('loadPatternLibrary', () => {
  it('fills the documented defaults', async () => {
    const [pattern] = await loadPatternLibrary(
      await libraryFile(`version: 1
patterns:
  - id: arms_up
    description: d
    threshold: 0.5
    min_keypoint_score: 0.3
    rule: { kind: sustained, signal: wrist_above_nose, zone: { min: 0 } }
`),
    );
    expect(pattern).toEqual({
      id: 'arms_up',
      description: 'd',
      enabled: true,
      threshold: 0.5,
      min_keypoint_score: 0.3,
      rule: { kind: 'sustained', signal: 'wrist_above_nose', side: 'either', zone: { min: 0 }, min_frames: 1 },
    });
  });

  it('lists every problem of an invalid library at once', async () => {
    const found = await problems(`version: 1
patterns:
  - id: a
    description: d
    threshold: 1.5
    min_keypoint_score: 0.3
    rule: { kind: transition, signal: elbow_height, from: { max: 0.1 }, to: { min: 2, max: 1 }, full_change: 1 }
  - id: a
    description: d
    threshold: 0.5
    min_keypoint_score: 0.3
    rule: { kind: stillness, max_displacement: 0.5 }
  - id: b
    description: d
    threshold: 0.5
    rule: { kind: teleport }
`);
    expect(found).toEqual(
      expect.arrayContaining([
        '"patterns[0].threshold" must be less than or equal to 1',
        expect.stringContaining('"patterns[0].rule.signal" must be one of'),
        '"patterns[0].rule.to": min is above max',
        '"patterns[1].rule.min_duration_ms" is required',
        '"patterns[1]" contains a duplicate value',
        '"patterns[2].min_keypoint_score" is required',
        '"patterns[2].rule.kind" must be one of [transition, sustained, stillness]',
      ]),
    );
    expect(found).toHaveLength(7);
  });

  it('refuses YAML that does not parse and a file that cannot be read', async () => {
    expect((await problems('version: 1\npatterns: [\n'))[0]).toMatch(/flow sequence|Missing|Unexpected/i);
    await expect(loadPatternLibrary('/nonexistent/patterns.yaml')).rejects.toThrow(/cannot read it: ENOENT/);
  });
});
