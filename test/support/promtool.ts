import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Debian's promtool (`apt-get install prometheus`), which lints a Prometheus exposition. */
export const PROMTOOL = '/usr/bin/promtool';

/** Whether promtool is installed; the lint tests skip (saying so) where it is not. */
export const promtoolInstalled = (): boolean => existsSync(PROMTOOL);

/** `promtool check metrics` over `exposition` (stdin): its exit code (0: clean) and everything it printed. */
export function promtoolCheckMetrics(exposition: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PROMTOOL, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
    child.stdin.on('error', () => undefined); // promtool may exit before reading it all; its verdict is what counts
    child.stdin.end(exposition);
  });
}

/** The metric names an exposition declares `gauge` (its `# TYPE <name> gauge` lines). */
export const gaugeNames = (exposition: string): string[] =>
  [...exposition.matchAll(/^# TYPE (\S+) gauge$/gm)].map((match) => match[1]);
