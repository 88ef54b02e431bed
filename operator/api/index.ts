export { API_VERSION, GROUP, VERSION, conditionSchema } from './meta.js';
export type { Condition, ObjectMeta, OwnerReference } from './meta.js';
export { CATEGORY, RESOURCES, schemaProblems } from './resources.js';
export type { AnyResource, KindName, PrinterColumn, ResourceDefinition, ResourceKinds } from './resources.js';
export {
  INGEST_MAX_ITEMS,
  VIDEO_ID_MAX,
  INGEST_SPEC_MAX_BYTES,
  ITEM_IDENTIFIER_MAX,
  ITEM_URL_MAX,
  INGEST_SOURCES,
  INGEST_STATES,
  INGEST_WORKER,
  ITEM_MESSAGE_MAX,
  TERMINAL_INGEST_STATES,
} from './ingestjob.js';
export type {
  IngestItem,
  IngestItemResult,
  IngestJob,
  IngestJobSpec,
  IngestJobStatus,
  IngestSource,
  IngestState,
} from './ingestjob.js';
export { CAMERA_WATCHER_PHASES, CAMERA_WATCHER_WORKER } from './camerawatcher.js';
export type { CameraWatcher, CameraWatcherPhase, CameraWatcherSpec, CameraWatcherStatus } from './camerawatcher.js';
export {
  CAPTION_PIPELINE_TYPES,
  CAPTION_RUN_MAX_ALERTS,
  CAPTION_RUN_PHASES,
  CAPTION_RUN_WORKER,
  TERMINAL_CAPTION_RUN_PHASES,
} from './captionrun.js';
export type {
  CaptionPipelineType,
  CaptionRun,
  CaptionRunAlert,
  CaptionRunPhase,
  CaptionRunSpec,
  CaptionRunStatus,
} from './captionrun.js';
export {
  CAMERA_RULE_ACTIONS,
  CAMERA_RULE_EVENT_TYPES,
  CAMERA_RULE_ID_MAX,
  CAMERA_RULE_MAX_RESULTS,
  CAMERA_RULE_RESULT_STATES,
} from './camerarule.js';
export type {
  CameraRule,
  CameraRuleAction,
  CameraRuleEventType,
  CameraRuleResult,
  CameraRuleResultState,
  CameraRuleSpec,
  CameraRuleStatus,
} from './camerarule.js';
