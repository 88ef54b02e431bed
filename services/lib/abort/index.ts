export { linkAbort } from './linked-abort.js';
export type { Unlink } from './linked-abort.js';
