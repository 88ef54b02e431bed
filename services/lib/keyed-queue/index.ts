export { KeyedQueue, QueueClosedError } from './keyed-queue.js';
export type { BackOff, KeyedQueueOptions } from './keyed-queue.js';
