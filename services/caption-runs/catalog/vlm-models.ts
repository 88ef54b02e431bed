import type { Logger } from '../../lib/log/index.js';
import { outboundRequest, UNRESTRICTED } from '../../lib/outbound/index.js';
import type { VlmConfig } from '../config.js';
import { OFFLINE_CAPTIONER } from './pipelines.js';

/** One captioning model: its name (a run's `modelName`) and where it runs. */
export interface VlmModel {
  name: string;
  /** `cpu` for the offline captioner; `vlm-endpoint` for the models of the configured VLM server. */
  device: string;
}

/** What `GET /api/vlm-models` answers; `warning` says why the VLM server's own list is missing. */
export interface VlmModelList {
  models: VlmModel[];
  warning?: string;
}

/** Largest `/models` answer read. */
const MAX_MODELS_BYTES = 256 * 1024;

/**
 * The VLM server's models (`GET {VLM_BASE_URL}/models`, OpenAI's `{data:[{id}]}`) with the configured model first,
 * then the offline captioner. When the server cannot be asked, the configured model stands alone with a warning.
 */
export async function listVlmModels(vlm: VlmConfig | undefined, logger: Logger): Promise<VlmModelList> {
  const offline: VlmModel = { name: OFFLINE_CAPTIONER, device: 'cpu' };
  if (!vlm) return { models: [offline] };
  const names = new Set<string>([vlm.model]);
  let warning: string | undefined;
  try {
    const response = await outboundRequest(`${vlm.baseUrl.replace(/\/+$/, '')}/models`, {
      policy: UNRESTRICTED,
      timeoutMs: vlm.timeoutMs,
      maxBytes: MAX_MODELS_BYTES,
      headers: { accept: 'application/json', ...(vlm.apiKey ? { authorization: `Bearer ${vlm.apiKey}` } : {}) },
    });
    if (response.status !== 200) {
      response.discard();
      throw new Error(`the VLM server answered ${response.status}`);
    }
    const body = JSON.parse((await response.bytes()).toString('utf8')) as { data?: unknown };
    if (!Array.isArray(body.data)) throw new Error('the VLM server answered no model list');
    for (const entry of body.data) {
      const id = (entry as { id?: unknown })?.id;
      if (typeof id === 'string' && id.length > 0 && id.length <= 253) names.add(id);
    }
  } catch (error) {
    warning = 'The VLM server could not list its models; the configured model is shown';
    logger.warn('listing the VLM models failed', { error: (error as Error).message });
  }
  return {
    models: [...[...names].map((name) => ({ name, device: 'vlm-endpoint' })), offline],
    ...(warning ? { warning } : {}),
  };
}
