/** Prefix of every path of this service (the contract's `/api/v1`). */
export const API_PREFIX = '/api/v1';
