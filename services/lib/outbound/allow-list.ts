import { BlockList, isIP } from 'node:net';
import Joi from 'joi';

const HOST_NAME =
  /^(\*\.)?(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** A host name as URL parsing leaves it: lower case, IPv6 without brackets, no trailing dot. */
export function bareHost(hostname: string): string {
  const host = hostname.toLowerCase();
  return (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host).replace(/\.$/, '');
}

/**
 * What a deployment opens to outbound requests beyond the default: CIDRs and single addresses (IPv4 and IPv6), and
 * host names, exact (`camera-7.lan`) or with every subdomain (`*.cameras.internal`). A host allowed by name may
 * resolve to any address; any other host is allowed only at addresses the list (or the policy) allows.
 */
export class AllowList {
  private readonly addresses = new BlockList();
  private readonly names = new Set<string>();
  private readonly suffixes: string[] = [];

  private constructor(readonly entries: readonly string[]) {}

  /** Parses comma-separated entries; throws an Error naming the first entry that is neither a CIDR nor a host name. */
  static parse(text: string): AllowList {
    const entries = text
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    const list = new AllowList(entries);
    for (const entry of entries) list.add(entry);
    return list;
  }

  /** The empty list: nothing opened beyond the policy's default. */
  static readonly EMPTY = AllowList.parse('');

  /** Whether `hostname` (from a URL) is allowed by name. */
  hasHost(hostname: string): boolean {
    const host = bareHost(hostname);
    if (this.names.has(host)) return true;
    return this.suffixes.some((suffix) => host.endsWith(suffix));
  }

  /** Whether the IP address lies in one of the listed CIDRs. */
  hasAddress(address: string): boolean {
    return this.addresses.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
  }

  private add(entry: string): void {
    const [network, prefix, extra] = entry.split('/');
    const family = isIP(network);
    if (family !== 0) {
      const bits = family === 4 ? 32 : 128;
      const length = prefix === undefined ? bits : /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
      if (extra !== undefined || !(length >= 0 && length <= bits)) throw new Error(`"${entry}" is not a valid CIDR`);
      this.addresses.addSubnet(network, length, family === 4 ? 'ipv4' : 'ipv6');
      return;
    }
    const name = entry.toLowerCase().replace(/\.$/, '');
    if (prefix !== undefined || !HOST_NAME.test(name))
      throw new Error(`"${entry}" is neither a CIDR, an IP address nor a host name`);
    if (name.startsWith('*.')) this.suffixes.push(name.slice(1));
    else this.names.add(name);
  }
}

/**
 * Joi schema of an allow-list setting (comma-separated CIDRs and host names); validates to an AllowList, and an empty
 * value to none (undefined), like an unset one.
 */
export const envAllowList = () =>
  Joi.string()
    .empty('')
    .custom((value: string, helpers) => {
      try {
        return AllowList.parse(value);
      } catch (error) {
        return helpers.message({ custom: `{{#label}}: ${(error as Error).message}` });
      }
    });
