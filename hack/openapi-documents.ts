/**
 * Every service's OpenAPI document, built by its own createApp without listening: `npm run openapi -- <dir>` writes
 * `<dir>/<service>.json` (default `.openapi/`), the linters and the client generator read them there.
 *
 * A document depends only on the route specs, so the apps are built on inert dependencies: each service's configuration is its
 * default (the loader given an empty environment), and every other part is a stand-in that answers any property read,
 * call or `new` with itself: it is never asked for real work, because no request is served. The event hub is real:
 * it declares /events and /ws.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  API_BASE_PATH as ALERT_DISPATCH_BASE_PATH,
  createApp as alertDispatchApp,
} from '../services/alert-dispatch/app.js';
import { EventHub } from '../services/alert-dispatch/streams/event-hub.js';
import { createApp as cameraRulesApp } from '../services/camera-rules/app.js';
import { createApp as captionQaApp } from '../services/caption-qa/app.js';
import { loadCaptionQaConfig } from '../services/caption-qa/config.js';
import { createApp as captionRunsApp } from '../services/caption-runs/app.js';
import { loadCaptionRunsConfig } from '../services/caption-runs/config.js';
import { createApp as dataprepApp } from '../services/dataprep/app.js';
import { loadDataprepConfig } from '../services/dataprep/config.js';
import { createApp as frameAnalysisApp } from '../services/frame-analysis/app.js';
import { loadFrameAnalysisConfig } from '../services/frame-analysis/config.js';
import { createLogger } from '../services/lib/log/index.js';

/** The services that serve /openapi.json, in the README's order. */
export const DOCUMENTED_SERVICES = [
  'dataprep',
  'alert-dispatch',
  'frame-analysis',
  'caption-qa',
  'caption-runs',
  'camera-rules',
] as const;

/** One of the services with an OpenAPI document. */
export type DocumentedService = (typeof DOCUMENTED_SERVICES)[number];

/** A stand-in for any dependency: property reads, calls and `new` give the stand-in again; as a number, 1. */
function inert(): any {
  const target = function () {} as unknown as object;
  const stand: any = new Proxy(target, {
    get(_target, key) {
      // A size read while building (frame-analysis' analysis side) converts to a number.
      if (key === Symbol.toPrimitive) return (hint: string) => (hint === 'number' ? 1 : 'inert');
      if (key === Symbol.iterator) return function* () {};
      // Not a promise, not a joi schema, not anything else a library recognises by a symbol.
      if (key === 'then' || typeof key === 'symbol') return undefined;
      return stand;
    },
    apply: () => stand,
    construct: () => stand,
  });
  return stand;
}

/** Dependencies whose listed fields are inert stand-ins, the given ones real. */
const depsOf = (inertFields: string[], real: Record<string, unknown> = {}): any => ({
  ...Object.fromEntries(inertFields.map((field) => [field, inert()])),
  ...real,
});

/** Builds every service's document; nothing listens, and nothing is left running. */
export async function serviceDocuments(): Promise<Record<DocumentedService, Record<string, unknown>>> {
  const logger = createLogger({ service: 'openapi-documents', level: 'error', json: true });
  const events = new EventHub({ logger, serviceInfo: {}, wsPath: `${ALERT_DISPATCH_BASE_PATH}/ws` });
  try {
    return {
      dataprep: dataprepApp(
        depsOf(
          ['objectStore', 'vectorStore', 'textVectorStore', 'descriptionStore', 'models', 'embedMedia', 'telemetry'],
          { logger, config: loadDataprepConfig({}), tempDir: path.join(os.tmpdir(), 'openapi-documents') },
        ),
      ).openapi,
      'alert-dispatch': alertDispatchApp(
        depsOf(['dispatcher', 'intake', 'registry', 'subscriptions', 'mcp'], { logger, streams: events }),
      ).openapi,
      'frame-analysis': frameAnalysisApp(
        depsOf(['estimator', 'patterns'], { logger, config: loadFrameAnalysisConfig({}) }),
      ).openapi,
      'caption-qa': captionQaApp(
        depsOf(['textEmbedder', 'imageEmbedder', 'captions', 'frames', 'keptFrames', 'sources'], {
          logger,
          config: loadCaptionQaConfig({}),
        }),
      ).openapi,
      'caption-runs': captionRunsApp(
        depsOf(['controlPlane', 'relay', 'resolveHost'], { logger, config: loadCaptionRunsConfig({}) }),
      ).openapi,
      'camera-rules': cameraRulesApp(
        depsOf(['recorder', 'rules', 'watchers', 'search', 'alerts', 'broker'], { logger }),
      ).openapi,
    };
  } finally {
    await events.close();
  }
}

/** Writes `<dir>/<service>.json` for every service; returns the paths written. */
export async function writeServiceDocuments(dir: string): Promise<Record<DocumentedService, string>> {
  await mkdir(dir, { recursive: true });
  const documents = await serviceDocuments();
  const written = {} as Record<DocumentedService, string>;
  for (const service of DOCUMENTED_SERVICES) {
    written[service] = path.join(dir, `${service}.json`);
    await writeFile(written[service], `${JSON.stringify(documents[service], null, 2)}\n`);
  }
  return written;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const written = await writeServiceDocuments(path.resolve(process.argv[2] ?? '.openapi'));
  for (const file of Object.values(written)) console.log(file);
}
