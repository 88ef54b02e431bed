import {
  ALERT_DISPATCH_SWEEP,
  isDetailBody as isAlertBody,
} from '../../services/alert-dispatch/testing/sweep-endpoints.js';
import { CAPTION_QA_SWEEP, isDetailBody as isQaBody } from '../../services/caption-qa/testing/sweep-endpoints.js';
import { CAMERA_RULES_SWEEP, isHttpValidationBody } from '../../services/camera-rules/testing/sweep-endpoints.js';
import { CAPTION_RUNS_SWEEP, isRunsErrorBody } from '../../services/caption-runs/testing/sweep-endpoints.js';
import { DATAPREP_SWEEP, isStatusMessageBody } from '../../services/dataprep/testing/sweep-endpoints.js';
import { FRAME_ANALYSIS_SWEEP, isAnalysisErrorBody } from '../../services/frame-analysis/testing/sweep-endpoints.js';
import type { ErrorShape, SweepEndpoint } from './malformed-sweep.js';

/** A service as the malformed sweep reaches it: its API base path, swept endpoints and error shape. */
export interface SweptService {
  basePath: string;
  endpoints: SweepEndpoint[];
  errorShape: ErrorShape;
}

/** Every service `argus up` starts, by the name it logs (`<name> listening`). */
export const SWEPT_SERVICES: Record<string, SweptService> = {
  dataprep: { basePath: '/v1/dataprep', endpoints: DATAPREP_SWEEP, errorShape: isStatusMessageBody },
  'alert-dispatch': { basePath: '/api/v1', endpoints: ALERT_DISPATCH_SWEEP, errorShape: isAlertBody },
  'frame-analysis': { basePath: '/api/v1', endpoints: FRAME_ANALYSIS_SWEEP, errorShape: isAnalysisErrorBody },
  'caption-qa': { basePath: '/api', endpoints: CAPTION_QA_SWEEP, errorShape: isQaBody },
  'caption-runs': { basePath: '/api', endpoints: CAPTION_RUNS_SWEEP, errorShape: isRunsErrorBody },
  'camera-rules': { basePath: '', endpoints: CAMERA_RULES_SWEEP, errorShape: isHttpValidationBody },
};
