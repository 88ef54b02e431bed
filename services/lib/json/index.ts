export { isObject } from './is-object.js';
