import type { Logger } from '../../lib/log/index.js';
import type { RecorderConfig } from '../config.js';
import { DirectoryRecorder } from './directory-recorder.js';
import type { Recorder } from './recorder.js';

/** The adapter the configuration names (main.ts's choice, kept here so the worker makes the same one). */
export function createRecorder(config: RecorderConfig, _logger: Logger): Recorder {
  switch (config.kind) {
    case 'directory':
      return new DirectoryRecorder(config.dir);
    case 'frigate':
      throw new Error('the Frigate recorder is not available yet');
  }
}
