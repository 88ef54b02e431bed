import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';

/** Debian's Chromium (`apt-get install chromium`), which the page tests drive headless. */
export const CHROMIUM = '/usr/bin/chromium';

/** Whether Chromium is installed; the page tests skip (saying so) where it is not. */
export const chromiumInstalled = (): boolean => existsSync(CHROMIUM);

/**
 * Flags of a headless Chromium that talks to nobody but the pages it is sent to: no sandbox (tests may run as root),
 * no background, component, sync or QUIC traffic, a fresh profile, and the DevTools protocol on a free port.
 */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--remote-debugging-port=0',
];

/** Frames a page may draw before it counts as never ready (about a minute at 60 frames a second). */
const MAX_READY_FRAMES = 3600;

/** A page load seen through the DevTools protocol. */
export interface PageVisit {
  /** Every URL the page requested, in order (documents, scripts, styles, images, fonts, fetches; blob: and data: too). */
  requests: string[];
}

/** A headless Chromium driven over the DevTools protocol. */
export interface HeadlessChromium {
  /**
   * Opens `url` in a new tab, waits until `readyExpression` (a JS expression) is true in the page, then until two
   * more frames have been drawn (effects of the last render run) and every request the page started has ended;
   * answers every URL it requested.
   */
  visit(url: string, readyExpression: string): Promise<PageVisit>;
  close(): Promise<void>;
}

/** The DevTools endpoint Chromium prints on stderr once it listens. */
function devtoolsEndpoint(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let stderr = '';
    const onData = (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const found = /DevTools listening on (ws:\/\/\S+)/.exec(stderr);
      if (found) {
        child.stderr!.off('data', onData);
        child.stderr!.resume();
        resolve(found[1]);
      }
    };
    child.stderr!.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) =>
      reject(new Error(`chromium exited (${code}) before listening: ${stderr.slice(-2000)}`)),
    );
  });
}

/** A DevTools protocol connection: commands answered by id, events to listeners. */
class DevtoolsConnection {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (result: any) => void; reject: (error: Error) => void }>();
  private readonly listeners = new Set<(method: string, params: any, sessionId?: string) => void>();

  constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data));
      if (message.id !== undefined) {
        const waiter = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (message.error) waiter?.reject(new Error(`${message.error.message} (${message.error.code})`));
        else waiter?.resolve(message.result);
      } else {
        for (const listener of this.listeners) listener(message.method, message.params, message.sessionId);
      }
    });
    socket.on('close', () => {
      for (const waiter of this.pending.values()) waiter.reject(new Error('DevTools connection closed'));
      this.pending.clear();
    });
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });
  }

  on(listener: (method: string, params: any, sessionId?: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Starts Debian's Chromium headless (see FLAGS) with a throw-away profile. */
export async function startHeadlessChromium(): Promise<HeadlessChromium> {
  const profile = await mkdtemp(path.join(os.tmpdir(), 'chromium-profile-'));
  const child = spawn(CHROMIUM, [...FLAGS, `--user-data-dir=${profile}`, 'about:blank'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let socket: WebSocket;
  try {
    socket = new WebSocket(await devtoolsEndpoint(child));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
  const devtools = new DevtoolsConnection(socket);

  return {
    async visit(url, readyExpression) {
      const { targetId } = await devtools.send('Target.createTarget', { url: 'about:blank' });
      const { sessionId } = await devtools.send('Target.attachToTarget', { targetId, flatten: true });
      const requests: string[] = [];
      const inFlight = new Set<string>();
      let settled: (() => void) | undefined;
      let loaded!: () => void;
      const load = new Promise<void>((resolve) => (loaded = resolve));
      const stop = devtools.on((method, params, from) => {
        if (from !== sessionId) return;
        if (method === 'Page.loadEventFired') loaded();
        else if (method === 'Network.requestWillBeSent') {
          requests.push(params.request.url);
          // Only network requests end with loadingFinished/loadingFailed (a blob: worker script never does).
          if (/^https?:/.test(params.request.url)) inFlight.add(params.requestId);
        } else if (method === 'Network.loadingFinished' || method === 'Network.loadingFailed') {
          inFlight.delete(params.requestId);
          if (inFlight.size === 0) settled?.();
        }
      });
      try {
        await devtools.send('Network.enable', {}, sessionId);
        await devtools.send('Page.enable', {}, sessionId);
        await devtools.send('Page.navigate', { url }, sessionId);
        await load;
        // Polls with the page's own frames, not a timer, a bounded number of them.
        const ready = `new Promise((resolve) => {
          let frames = ${MAX_READY_FRAMES};
          const check = () => (${readyExpression})
            ? requestAnimationFrame(() => requestAnimationFrame(() => resolve(true)))
            : --frames > 0 ? requestAnimationFrame(check) : resolve(false);
          check();
        })`;
        const { result, exceptionDetails } = await devtools.send(
          'Runtime.evaluate',
          { expression: ready, awaitPromise: true, returnByValue: true },
          sessionId,
        );
        if (exceptionDetails) throw new Error(`the page failed: ${JSON.stringify(exceptionDetails)}`);
        if (result.value !== true) throw new Error(`the page never got ready: ${readyExpression}`);
        if (inFlight.size > 0) await new Promise<void>((resolve) => (settled = resolve));
        return { requests };
      } finally {
        stop();
        await devtools.send('Target.closeTarget', { targetId });
      }
    },
    async close() {
      // Browser.close ends every Chromium process; a SIGTERM alone may leave helpers writing into the profile.
      await devtools.send('Browser.close').catch(() => child.kill('SIGTERM'));
      await exited;
      socket.close();
      // Retried: a helper process may still be letting go of a file in the profile as the browser exits.
      await rm(profile, { recursive: true, force: true, maxRetries: 10 });
    },
  };
}
