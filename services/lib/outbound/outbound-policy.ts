import { isIP } from 'node:net';
import { nonPublicKind } from './address-ranges.js';
import { AllowList, bareHost } from './allow-list.js';
import { OutboundError } from './outbound-error.js';

/** Which addresses an outbound request may connect to. */
export interface OutboundPolicy {
  /** What is opened beyond the default. */
  allow: AllowList;
  /**
   * Whether public addresses are allowed without an allow-list entry: yes for image downloads, no for webhook URLs
   * sent by clients (only what the deployment listed).
   */
  publicAddresses: boolean;
  /** The setting that holds the allow-list, named in refusals (e.g. MM_DATAPREP_IMAGE_URL_ALLOW). */
  setting: string;
}

/** No check at all: for URLs the operator configured (WEBHOOK_URL), never for a URL a client sent. */
export const UNRESTRICTED: OutboundPolicy = Object.freeze({
  allow: AllowList.parse('0.0.0.0/0,::/0'),
  publicAddresses: true,
  setting: 'configuration',
});

/** Why `address` is refused under `policy`; undefined when it is allowed. */
function addressRefusal(policy: OutboundPolicy, address: string): string | undefined {
  if (policy.allow.hasAddress(address)) return undefined;
  const kind = nonPublicKind(address);
  if (kind) return `${kind === 'unspecified' ? 'an' : 'a'} ${kind} address not in ${policy.setting}`;
  return policy.publicAddresses ? undefined : `not in ${policy.setting}`;
}

/**
 * Throws OutboundError('refused') unless every address `hostname` resolved to is allowed: a name that mixes public
 * and internal addresses is refused as a whole. A host allowed by name passes whatever it resolves to.
 */
export function assertAllowed(policy: OutboundPolicy, hostname: string, addresses: readonly string[]): void {
  const host = bareHost(hostname);
  if (policy.allow.hasHost(host)) return;
  for (const address of addresses) {
    const why = addressRefusal(policy, address);
    if (why === undefined) continue;
    const what = isIP(host) ? `${address} is` : `${host} resolves to ${address},`;
    throw new OutboundError('refused', `refused: ${what} ${why}`);
  }
}
