export { isProcessAlive } from './process-alive.js';
