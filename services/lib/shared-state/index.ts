import { MemorySharedState } from './memory-state.js';
import { RedisSharedState } from './redis-state.js';
import type { SharedState } from './shared-state.js';

export {
  compareBroadcastIds,
  SharedStateUnavailableError,
  type BroadcastEntry,
  type BroadcastListener,
  type SharedState,
} from './shared-state.js';
export { MemorySharedState, type NowMs } from './memory-state.js';
export { RedisSharedState, type RedisSharedStateOptions } from './redis-state.js';

/** Which shared state to build: this process's memory (embedded, one replica) or Redis (every replica). */
export type SharedStateConfig =
  { backend: 'memory' } | { backend: 'redis'; url: string; namespace: string; clientName: string };

/**
 * Builds the configured SharedState; a Redis one is connected first, so a wrong URL or an unreachable server is a
 * start-up error rather than the first request's.
 */
export async function openSharedState(
  config: SharedStateConfig,
  onError?: (error: Error) => void,
): Promise<SharedState> {
  if (config.backend === 'memory') return new MemorySharedState();
  const state = new RedisSharedState({ ...config, onError });
  try {
    await state.ready();
  } catch (error) {
    await state.close();
    throw error;
  }
  return state;
}
