export { AllowList, envAllowList } from './allow-list.js';
export { nonPublicKind } from './address-ranges.js';
export type { NonPublicKind } from './address-ranges.js';
export { OutboundError } from './outbound-error.js';
export type { OutboundFailure } from './outbound-error.js';
export { UNRESTRICTED } from './outbound-policy.js';
export type { OutboundPolicy } from './outbound-policy.js';
export { outboundRequest } from './outbound-request.js';
export type { OutboundRequestOptions, OutboundResponse, ResolvedAddress, Resolver } from './outbound-request.js';
