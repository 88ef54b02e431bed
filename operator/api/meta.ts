import { Type, type Static } from '@sinclair/typebox';
import { stringEnum, strictObject, timestamp } from './schema-helpers.js';

/** API group of every Argus resource. */
export const GROUP = 'argus.dev';
/** The served and stored version. */
export const VERSION = 'v1alpha1';
/** `apiVersion` of every Argus resource. */
export const API_VERSION = `${GROUP}/${VERSION}`;

/** An Argus resource as the API server serves it: the same envelope for every kind, its own spec and status. */
export interface ArgusResource<Kind extends string, Spec, Status> {
  apiVersion: 'argus.dev/v1alpha1';
  kind: Kind;
  metadata: ObjectMeta;
  spec: Spec;
  status?: Status;
}

/** An owner reference (metav1.OwnerReference). */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The object metadata the control plane reads and writes (a subset of metav1.ObjectMeta, JSON shape). */
export interface ObjectMeta {
  name: string;
  namespace: string;
  uid?: string;
  /** Opaque; compare for equality only. */
  resourceVersion?: string;
  /** Moves only when the spec changes. */
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
}

/** A metav1.Condition. `lastTransitionTime` changes only when `status` does. */
export const conditionSchema = strictObject(
  {
    type: Type.String({ description: 'Condition type: Ready, Progressing or Degraded.', maxLength: 316 }),
    status: stringEnum(['True', 'False', 'Unknown'] as const, 'Status of the condition: True, False or Unknown.'),
    reason: Type.String({
      description: 'CamelCase reason for the last transition, for machines.',
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
      maxLength: 1024,
      minLength: 1,
    }),
    message: Type.String({ description: 'Human-readable detail of the last transition.', maxLength: 1024 }),
    lastTransitionTime: timestamp('When status last changed.'),
    observedGeneration: Type.Optional(
      Type.Integer({ description: 'The metadata.generation the condition was set from.', minimum: 0 }),
    ),
  },
  'A condition of the resource (metav1.Condition).',
);

/** One condition of a resource's status. */
export type Condition = Static<typeof conditionSchema>;

/** The condition list every Argus status carries. */
export function conditionsSchema() {
  return Type.Optional(
    Type.Array(conditionSchema, {
      description: 'Ready, Progressing and Degraded, with reasons and messages.',
      maxItems: 8,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    }),
  );
}

/** observedGeneration, the same in every status. */
export function observedGenerationSchema() {
  return Type.Optional(Type.Integer({ description: 'The metadata.generation this status reflects.', minimum: 0 }));
}
