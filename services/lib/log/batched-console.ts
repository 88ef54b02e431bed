import TransportStream from 'winston-transport';

/** winston's info keys for the formatted line and the level (global symbols, see triple-beam). */
export const MESSAGE = Symbol.for('message');
const LEVEL = Symbol.for('level');

/** Lines queued beyond this many characters are written at once instead of at the end of the turn. */
const MAX_PENDING_CHARS = 64 * 1024;

/**
 * Log lines bound for one output stream, written once per event-loop turn: under load a line per request would
 * otherwise cost a system call per request. Every logger writing to the stream shares its buffer, so lines keep
 * their order across loggers.
 */
class LineBuffer {
  private pending = '';
  private scheduled = false;

  constructor(private readonly stream: NodeJS.WritableStream) {}

  add(line: string): void {
    this.pending += line;
    if (this.pending.length >= MAX_PENDING_CHARS) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushScheduled);
    }
  }

  flush(): void {
    if (this.pending.length === 0) return;
    const lines = this.pending;
    this.pending = '';
    this.stream.write(lines);
  }

  private readonly flushScheduled = (): void => {
    this.scheduled = false;
    this.flush();
  };
}

const buffers = new Map<NodeJS.WritableStream, LineBuffer>();

function bufferFor(stream: NodeJS.WritableStream): LineBuffer {
  let buffer = buffers.get(stream);
  if (!buffer) {
    buffer = new LineBuffer(stream);
    buffers.set(stream, buffer);
  }
  return buffer;
}

// stdout and stderr are synchronous for files, pipes and terminals on Linux, so lines written on exit still land
// (also when an uncaught exception ends the process).
process.once('exit', () => {
  for (const buffer of buffers.values()) buffer.flush();
});

/** Where a BatchedConsoleTransport writes; process.stdout and process.stderr by default. */
export interface ConsoleStreams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/**
 * Console transport that batches lines per event-loop turn: info and below to stdout, warn and error to stderr.
 * An error line is written at once, with every line queued before it, so that a crash right after an error loses
 * nothing already logged. Lines keep their order per stream.
 */
export class BatchedConsoleTransport extends TransportStream {
  private readonly out: LineBuffer;
  private readonly err: LineBuffer;

  constructor(streams: ConsoleStreams = { stdout: process.stdout, stderr: process.stderr }) {
    super();
    this.out = bufferFor(streams.stdout);
    this.err = bufferFor(streams.stderr);
  }

  override log(info: Record<symbol, unknown>, callback: () => void): void {
    const level = info[LEVEL];
    const line = `${String(info[MESSAGE])}\n`;
    if (level === 'error') {
      this.out.flush();
      this.err.add(line);
      this.err.flush();
    } else if (level === 'warn') {
      this.err.add(line);
    } else {
      this.out.add(line);
    }
    callback();
  }
}
