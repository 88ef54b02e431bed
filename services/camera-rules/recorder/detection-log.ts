import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isObject } from '../../lib/json/index.js';
import type { Segment, SegmentAnalysis } from './segment-analysis.js';

/**
 * The analyses of recording segments, one JSON file per segment (`<root>/<camera>/<start>.json`): what the directory
 * recorder lists as events, written once per segment by whichever watcher analysed it. Writes are atomic (a temp file
 * renamed), so two writers of one segment (a rolling update) leave one whole file. Camera names are directory names
 * the recorder found, never request input.
 */
export class DetectionLog {
  constructor(private readonly root: string) {}

  private fileOf(segment: Segment): string {
    return path.join(this.root, segment.camera, `${segment.start}.json`);
  }

  /** The segment's analysis, or undefined when it has none (or an unreadable one, analysed again). */
  async read(segment: Segment): Promise<SegmentAnalysis | undefined> {
    let text: string;
    try {
      text = await readFile(this.fileOf(segment), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const value = JSON.parse(text) as unknown;
      if (isObject(value) && typeof value.videoId === 'string' && Array.isArray(value.detections)) {
        return value as unknown as SegmentAnalysis;
      }
    } catch {
      // a torn or foreign file: analysed again
    }
    return undefined;
  }

  async write(segment: Segment, analysis: SegmentAnalysis): Promise<void> {
    const file = this.fileOf(segment);
    await mkdir(path.dirname(file), { recursive: true });
    const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    await writeFile(temp, JSON.stringify(analysis));
    await rename(temp, file);
  }
}
