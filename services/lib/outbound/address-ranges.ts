import { BlockList, isIP } from 'node:net';

/** Kinds of addresses that are not on the public internet, as refusals name them. */
export type NonPublicKind =
  'unspecified' | 'loopback' | 'private' | 'shared (CGNAT)' | 'link-local' | 'unique-local' | 'multicast' | 'reserved';

/**
 * IANA special-purpose ranges by kind, checked in this order. `net.BlockList` matches IPv4-mapped IPv6 addresses
 * (`::ffff:127.0.0.1`, `::ffff:7f00:1`) against the IPv4 ranges, so those need no range of their own.
 */
const RANGES: ReadonlyArray<[NonPublicKind, ReadonlyArray<string>]> = [
  ['unspecified', ['0.0.0.0/8', '::/128']],
  ['loopback', ['127.0.0.0/8', '::1/128']],
  ['private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']],
  ['shared (CGNAT)', ['100.64.0.0/10']],
  ['link-local', ['169.254.0.0/16', 'fe80::/10']],
  ['unique-local', ['fc00::/7']],
  ['multicast', ['224.0.0.0/4', 'ff00::/8']],
  [
    'reserved',
    [
      '192.0.0.0/24', // IETF protocol assignments
      '192.0.2.0/24', // documentation
      '198.18.0.0/15', // benchmarking
      '198.51.100.0/24',
      '203.0.113.0/24',
      '240.0.0.0/4', // future use and limited broadcast
      '::/96', // deprecated IPv4-compatible addresses (::127.0.0.1)
      '64:ff9b:1::/48', // local-use NAT64
      '100::/64', // discard-only
      '2001:db8::/32', // documentation
      'fec0::/10', // deprecated site-local
    ],
  ],
];

const LISTS: ReadonlyArray<[NonPublicKind, BlockList]> = RANGES.map(([kind, cidrs]) => {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network, prefix] = cidr.split('/');
    list.addSubnet(network, Number(prefix), isIP(network) === 6 ? 'ipv6' : 'ipv4');
  }
  return [kind, list];
});

/** The kind of a non-public IP address (IPv4, IPv6, IPv4-mapped); undefined for a public one. */
export function nonPublicKind(address: string): NonPublicKind | undefined {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  for (const [kind, list] of LISTS) if (list.check(address, family)) return kind;
  return undefined;
}
