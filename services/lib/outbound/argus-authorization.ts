/**
 * The header a call to another Argus service carries: `Authorization: Bearer <the first of this process's API
 * keys>` (the services share ARGUS_API_KEYS), or none when no key is set.
 */
export function argusAuthorization(apiKeys: readonly string[]): Record<string, string> {
  return apiKeys.length > 0 ? { authorization: `Bearer ${apiKeys[0]}` } : {};
}
