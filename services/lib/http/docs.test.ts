import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  chromiumInstalled,
  startHeadlessChromium,
  type HeadlessChromium,
} from '../../../test/support/headless-chromium.js';
import { createLogger } from '../log/index.js';
import { createHttpApp, listen, statusMessageStyle } from './index.js';
import type { RunningServer } from './index.js';

const logger = createLogger({ service: 'docs-test', level: 'error', json: true });

/** Every URL a page's markup makes the browser load or link: src and href attributes. */
const referencedUrls = (html: string) => [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]);

/** Absolute http(s) addresses a script gives as an element's `src` (`src:"…"` in rendering code, `.src = "…"`). */
const remoteSources = (code: string) => [...code.matchAll(/\bsrc\s*[:=]\s*["'`](https?:[^"'`]*)/g)].map((m) => m[1]);

let server: RunningServer;
beforeAll(async () => {
  const { app } = createHttpApp({
    info: { title: 'Docs <Test> API', version: '1.0.0' },
    service: 'docs-test',
    logger,
    errors: statusMessageStyle('failed'),
    routes: [],
    basePath: '/v1/docs-test',
  });
  server = await listen(app, { port: 0, host: '127.0.0.1', logger, name: 'docs-test' });
});
afterAll(() => server.close());

describe('docs pages', () => {
  it.each(['/docs', '/redoc'])(
    '%s loads nothing from another origin, and every asset it names is served',
    async (page) => {
      const res = await fetch(server.url + page);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await res.text();
      expect(html).toContain('<title>Docs &lt;Test&gt; API</title>');
      expect(html).not.toMatch(/https?:|\/\/[a-z]/i);
      const urls = referencedUrls(html);
      expect(urls).toContain('/docs/assets/favicon.png');
      for (const url of urls) {
        expect(url).toMatch(/^\/[^/]/); // same origin: a path, never a scheme or a //host
        const asset = await fetch(server.url + url);
        expect([url, asset.status]).toEqual([url, 200]);
        const body = Buffer.from(await asset.arrayBuffer());
        expect(body.length).toBeGreaterThan(0);
        // Stylesheets may only pull in inline data, never a font or image from elsewhere.
        if (url.endsWith('.css')) {
          const external = [...body.toString('utf8').matchAll(/url\(\s*(?!['"]?data:)([^)]*)\)/g)].map((m) => m[1]);
          expect(external).toEqual([]);
        }
        // Nor may a script set an absolute address as the source of what it renders (redoc's logo was one).
        if (url.endsWith('.js')) expect([url, remoteSources(body.toString('utf8'))]).toEqual([url, []]);
      }
    },
  );

  it('the favicon is a PNG and Swagger UI starts on the service’s own document, without the online validator', async () => {
    const icon = Buffer.from(await (await fetch(server.url + '/docs/assets/favicon.png')).arrayBuffer());
    expect(icon.subarray(1, 4).toString('latin1')).toBe('PNG');
    const init = await (await fetch(server.url + '/docs/assets/swagger-init.js')).text();
    expect(await (await fetch(server.url + '/docs')).text()).toContain('data-spec-url="/openapi.json"');
    expect(init).toContain('url: root.dataset.specUrl');
    expect(init).toContain('validatorUrl: null');
  });

  it('answers 404 for an asset it does not have', async () => {
    expect((await fetch(server.url + '/docs/assets/index.html')).status).toBe(404);
    expect((await fetch(server.url + '/docs/assets/toString')).status).toBe(404);
  });
});

/** What each page shows once it has rendered the service's document. */
const RENDERED = {
  '/docs': "document.querySelector('.swagger-ui .info .title') !== null",
  '/redoc': "document.querySelector('.api-content h1') !== null && document.querySelector('.menu-content') !== null",
};

const inBrowser = chromiumInstalled() ? describe : describe.skip;
const why = chromiumInstalled() ? '' : ' (skipped: no /usr/bin/chromium; apt-get install chromium)';

inBrowser(`docs pages in a real browser${why}`, () => {
  let browser: HeadlessChromium;
  beforeAll(async () => {
    browser = await startHeadlessChromium();
  });
  afterAll(() => browser?.close());

  it.each(Object.keys(RENDERED) as Array<keyof typeof RENDERED>)(
    '%s, rendered by headless Chromium, requests nothing from another origin',
    async (page) => {
      const { requests } = await browser.visit(server.url + page, RENDERED[page]);
      const origin = new URL(server.url).origin;
      expect(requests).toEqual(expect.arrayContaining([server.url + page, `${origin}/openapi.json`]));
      // A data: image never leaves the page; a blob: (redoc's search worker) has the page's origin.
      expect(requests.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin)).toEqual([]);
    },
  );
});
