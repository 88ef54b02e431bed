import type { TObject } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { cameraRuleSpecSchema, cameraRuleStatusSchema, type CameraRule } from './camerarule.js';
import { cameraWatcherSpecSchema, cameraWatcherStatusSchema, type CameraWatcher } from './camerawatcher.js';
import { captionRunSpecSchema, captionRunStatusSchema, type CaptionRun } from './captionrun.js';
import { ingestJobSpecSchema, ingestJobStatusSchema, type IngestJob } from './ingestjob.js';
import { API_VERSION, GROUP, VERSION } from './meta.js';

/** Every Argus resource type by kind. */
export interface ResourceKinds {
  IngestJob: IngestJob;
  CameraWatcher: CameraWatcher;
  CaptionRun: CaptionRun;
  CameraRule: CameraRule;
}

/** The name of an Argus kind. */
export type KindName = keyof ResourceKinds;
/** Any Argus resource. */
export type AnyResource = ResourceKinds[KindName];

/** A column of `kubectl get`. */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description: string;
  priority?: number;
}

/** What the API server (and the embedded store) needs to know of a kind. */
export interface ResourceDefinition {
  kind: KindName;
  plural: string;
  singular: string;
  listKind: string;
  shortNames: string[];
  description: string;
  spec: TObject;
  status: TObject;
  printerColumns: PrinterColumn[];
}

const AGE: PrinterColumn = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description: 'Time since the resource was created.',
};

/** The kinds of group argus.dev, version v1alpha1: the single source of `crds/*.yaml`. */
export const RESOURCES: Record<KindName, ResourceDefinition> = {
  IngestJob: {
    kind: 'IngestJob',
    plural: 'ingestjobs',
    singular: 'ingestjob',
    listKind: 'IngestJobList',
    shortNames: ['ij'],
    description:
      'A batch of media to embed. dataprep creates it for every asynchronous operation; the operator runs its items as an indexed Job (in the cluster) or an in-process task (embedded).',
    spec: ingestJobSpecSchema,
    status: ingestJobStatusSchema,
    printerColumns: [
      { name: 'State', type: 'string', jsonPath: '.status.state', description: 'Where the job is.' },
      { name: 'Done', type: 'string', jsonPath: '.status.progress', description: 'Items done of the total.' },
      { name: 'Failed', type: 'integer', jsonPath: '.status.failed', description: 'Items that failed.' },
      { name: 'Source', type: 'string', jsonPath: '.spec.source', description: 'How the items arrived.', priority: 1 },
      AGE,
    ],
  },
  CameraWatcher: {
    kind: 'CameraWatcher',
    plural: 'camerawatchers',
    singular: 'camerawatcher',
    listKind: 'CameraWatcherList',
    shortNames: ['cw'],
    description: "Watches one camera's recorder events (camera-rules); enabled or disabled per camera.",
    spec: cameraWatcherSpecSchema,
    status: cameraWatcherStatusSchema,
    printerColumns: [
      { name: 'Camera', type: 'string', jsonPath: '.spec.camera', description: 'The camera name.' },
      { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled', description: 'Whether it is watched.' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'What the watcher is doing.' },
      AGE,
    ],
  },
  CaptionRun: {
    kind: 'CaptionRun',
    plural: 'captionruns',
    singular: 'captionrun',
    listKind: 'CaptionRunList',
    shortNames: ['crun'],
    description: 'One live caption run on an RTSP stream (caption-runs); deleting it stops the run.',
    spec: captionRunSpecSchema,
    status: captionRunStatusSchema,
    printerColumns: [
      { name: 'Run', type: 'string', jsonPath: '.spec.runName', description: 'Name of the run.' },
      { name: 'Model', type: 'string', jsonPath: '.spec.modelName', description: 'The captioning model.' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'What the run is doing.' },
      AGE,
    ],
  },
  CameraRule: {
    kind: 'CameraRule',
    plural: 'camerarules',
    singular: 'camerarule',
    listKind: 'CameraRuleList',
    shortNames: ['crule'],
    description:
      'A camera-rules rule: events with this label (on this camera, from this source) trigger the action; status counts the events matched.',
    spec: cameraRuleSpecSchema,
    status: cameraRuleStatusSchema,
    printerColumns: [
      { name: 'Rule', type: 'string', jsonPath: '.spec.id', description: 'The rule id.' },
      { name: 'Label', type: 'string', jsonPath: '.spec.label', description: 'The label it matches.' },
      { name: 'Action', type: 'string', jsonPath: '.spec.action', description: 'What it does.' },
      { name: 'Camera', type: 'string', jsonPath: '.spec.camera', description: 'Its camera (any when empty).' },
      { name: 'Count', type: 'integer', jsonPath: '.status.count', description: 'Events matched.' },
      AGE,
    ],
  },
};

/** `kubectl get argus` lists every kind. */
export const CATEGORY = 'argus';

export { API_VERSION, GROUP, VERSION };

/** Problems of `value` against a kind's spec or status schema, as "path: message" lines (empty when valid). */
export function schemaProblems(kind: KindName, part: 'spec' | 'status', value: unknown): string[] {
  const schema = RESOURCES[kind][part];
  return [...Value.Errors(schema, value)].map((e) => `${part}${e.path.replaceAll('/', '.')}: ${e.message}`);
}
