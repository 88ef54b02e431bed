import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import Router from '@koa/router';
import { koaSwagger } from 'koa2-swagger-ui';

const require = createRequire(import.meta.url);
const swaggerDist = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const redocBundle = require.resolve('redoc/bundles/redoc.standalone.js');
const SWAGGER_ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js']);

const redocPage = (title: string) => `<!doctype html>
<html><head><meta charset="utf-8"><title>${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><redoc spec-url="/openapi.json"></redoc><script src="/redoc/redoc.standalone.js"></script></body></html>`;

/**
 * `/openapi.json`, `/docs` (Swagger UI) and `/redoc`, all served from local packages so they work offline.
 */
export function docsRouter(title: string, openapi: Record<string, unknown>): Router {
  const router = new Router();
  router.get('/openapi.json', (ctx) => {
    ctx.body = openapi;
  });
  router.get('/docs/assets/:file', (ctx) => {
    const file = ctx.params.file === 'swagger-ui.min.css' ? 'swagger-ui.css' : ctx.params.file;
    if (!SWAGGER_ASSETS.has(file)) return;
    ctx.type = path.extname(file);
    ctx.body = createReadStream(path.join(swaggerDist, file));
  });
  router.get(
    '/docs',
    koaSwagger({
      routePrefix: false,
      title,
      swaggerCdnUrl: '/docs',
      swaggerVersion: 'assets',
      swaggerOptions: { url: '/openapi.json' },
    }),
  );
  router.get('/redoc', (ctx) => {
    ctx.type = 'html';
    ctx.body = redocPage(title);
  });
  router.get('/redoc/redoc.standalone.js', (ctx) => {
    ctx.type = 'application/javascript';
    ctx.body = createReadStream(redocBundle);
  });
  return router;
}
