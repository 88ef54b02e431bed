import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import Router from '@koa/router';

const require = createRequire(import.meta.url);
const swaggerDist = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const redocBundle = require.resolve('redoc/bundles/redoc.standalone.js');

/**
 * What redoc 2.5's bundle loads from elsewhere when it renders: the Redocly logo beside "API docs by Redocly" in its
 * side menu, an image no option turns off. The bundle is served with an empty inline image in its place, so the
 * page asks nothing of a CDN (a failed request offline, a third-party ping online).
 */
const REDOC_REMOTE_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const EMPTY_IMAGE = 'data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';

let redocScript: Promise<string> | undefined;
/** The redoc bundle as served: read once, the remote logo replaced. */
const servedRedocScript = () =>
  (redocScript ??= readFile(redocBundle, 'utf8').then((code) => code.replaceAll(REDOC_REMOTE_LOGO, EMPTY_IMAGE)));

/** Files the docs pages load, every one from an installed package: nothing is fetched from another origin. */
const ASSETS: Record<string, { type: string; file: string }> = {
  'swagger-ui.css': { type: 'text/css', file: path.join(swaggerDist, 'swagger-ui.css') },
  'swagger-ui-bundle.js': { type: 'application/javascript', file: path.join(swaggerDist, 'swagger-ui-bundle.js') },
  'favicon.png': { type: 'image/png', file: path.join(swaggerDist, 'favicon-32x32.png') },
};

/**
 * Starts Swagger UI on the document the page names. In a file rather than inline, so that the page runs under a
 * strict Content-Security-Policy; `validatorUrl: null` keeps it from sending the document to validator.swagger.io.
 */
const SWAGGER_INIT = `const root = document.getElementById('swagger-ui');
window.ui = SwaggerUIBundle({ url: root.dataset.specUrl, domNode: root, validatorUrl: null, deepLinking: true });
`;

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

const page = (title: string, head: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" type="image/png" href="/docs/assets/favicon.png">${head}</head>
<body>${body}</body></html>`;

const swaggerPage = (title: string) =>
  page(
    title,
    '<link rel="stylesheet" href="/docs/assets/swagger-ui.css">',
    '<div id="swagger-ui" data-spec-url="/openapi.json"></div><script src="/docs/assets/swagger-ui-bundle.js"></script>' +
      '<script src="/docs/assets/swagger-init.js"></script>',
  );

const redocPage = (title: string) =>
  page(title, '', '<redoc spec-url="/openapi.json"></redoc><script src="/redoc/redoc.standalone.js"></script>');

/**
 * `/openapi.json`, `/docs` (Swagger UI) and `/redoc`, pages and every asset they load (scripts, styles, favicon)
 * served from local packages, so they work offline and load nothing from another origin; they use the browser's own
 * fonts.
 */
export function docsRouter(title: string, openapi: Record<string, unknown>): Router {
  const router = new Router();
  router.get('/openapi.json', (ctx) => {
    ctx.body = openapi;
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'html';
    ctx.body = swaggerPage(title);
  });
  router.get('/docs/assets/swagger-init.js', (ctx) => {
    ctx.type = 'application/javascript';
    ctx.body = SWAGGER_INIT;
  });
  router.get('/docs/assets/:file', (ctx) => {
    const asset = Object.hasOwn(ASSETS, ctx.params.file) ? ASSETS[ctx.params.file] : undefined;
    if (!asset) return;
    ctx.type = asset.type;
    ctx.body = createReadStream(asset.file);
  });
  router.get('/redoc', (ctx) => {
    ctx.type = 'html';
    ctx.body = redocPage(title);
  });
  router.get('/redoc/redoc.standalone.js', async (ctx) => {
    ctx.type = 'application/javascript';
    ctx.body = await servedRedocScript();
  });
  return router;
}
