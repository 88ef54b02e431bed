export { counted } from './counted.js';
