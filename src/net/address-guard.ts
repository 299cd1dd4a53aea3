// Which network addresses an input fetch or a webhook delivery may connect to. Only global unicast addresses pass: anything
// that can reach this host, its private networks or cloud metadata services is refused. IPv6 forms that
// carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by the IPv4 address they carry.
import ipaddr from 'ipaddr.js';

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/** Decides whether a resolved address may be contacted. Injectable so tests can treat loopback as public. */
export type AddressPolicy = (address: string) => AddressVerdict;

type Rule = [cidr: string, reason: string];

// IANA IPv4 special-purpose registry, minus the few globally reachable entries.
const V4_RULES: Rule[] = [
  ['0.0.0.0/8', 'a "this network" address'],
  ['10.0.0.0/8', 'a private address'],
  ['100.64.0.0/10', 'a carrier-grade NAT address'],
  ['127.0.0.0/8', 'a loopback address'],
  ['169.254.0.0/16', 'a link-local address'],
  ['172.16.0.0/12', 'a private address'],
  ['192.0.0.0/24', 'an IETF protocol address'],
  ['192.0.2.0/24', 'a documentation address'],
  ['192.88.99.0/24', 'a 6to4 relay address'],
  ['192.168.0.0/16', 'a private address'],
  ['198.18.0.0/15', 'a benchmarking address'],
  ['198.51.100.0/24', 'a documentation address'],
  ['203.0.113.0/24', 'a documentation address'],
  ['224.0.0.0/4', 'a multicast address'],
  ['255.255.255.255/32', 'the broadcast address'],
  ['240.0.0.0/4', 'a reserved address'],
];

// Checked in order; the first match decides. `embedded` rules extract an IPv4 address from the given
// byte offset and judge that instead.
const V6_RULES: Array<Rule | [cidr: string, embedded: { offset: number; form: string }]> = [
  ['::/128', 'the unspecified address'],
  ['::1/128', 'a loopback address'],
  ['::ffff:0:0/96', { offset: 12, form: 'IPv4-mapped' }],
  ['::ffff:0:0:0/96', { offset: 12, form: 'IPv4-translated' }],
  ['::/96', { offset: 12, form: 'IPv4-compatible' }],
  ['64:ff9b::/96', { offset: 12, form: 'NAT64' }],
  ['64:ff9b:1::/48', 'a local-use NAT64 address'],
  ['100::/64', 'a discard-only address'],
  ['2001::/32', 'a Teredo tunnel address'],
  ['2001:db8::/32', 'a documentation address'],
  ['2001::/23', 'an IETF protocol address'],
  ['2002::/16', { offset: 2, form: '6to4' }],
  ['3fff::/20', 'a documentation address'],
  ['5f00::/16', 'a segment-routing address'],
  ['fc00::/7', 'a unique-local address'],
  ['fe80::/10', 'a link-local address'],
  ['fec0::/10', 'a site-local address'],
  ['ff00::/8', 'a multicast address'],
];

const v4Rules = V4_RULES.map(([cidr, reason]) => ({ range: ipaddr.IPv4.parseCIDR(cidr), reason }));
const v6Rules = V6_RULES.map(([cidr, what]) => ({ range: ipaddr.IPv6.parseCIDR(cidr), what }));
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

function judgeV4(addr: ipaddr.IPv4): AddressVerdict {
  for (const rule of v4Rules)
    if (addr.match(rule.range)) return { allowed: false, reason: rule.reason };
  return { allowed: true };
}

function judgeV6(addr: ipaddr.IPv6): AddressVerdict {
  for (const rule of v6Rules) {
    if (!addr.match(rule.range)) continue;
    if (typeof rule.what === 'string') return { allowed: false, reason: rule.what };
    const bytes = addr.toByteArray().slice(rule.what.offset, rule.what.offset + 4);
    const inner = judgeV4(new ipaddr.IPv4(bytes));
    return inner.allowed
      ? inner
      : { allowed: false, reason: `${inner.reason} (${rule.what.form} IPv6)` };
  }
  if (!addr.match(GLOBAL_UNICAST_V6)) return { allowed: false, reason: 'a reserved address' };
  return { allowed: true };
}

/**
 * The default policy: a literal IP address (as DNS or the URL parser produced it) is allowed only when it
 * is global unicast. Anything that does not parse as an address is refused.
 */
export const publicAddressPolicy: AddressPolicy = (address) => {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // Only canonical dotted-quad IPv4 here: odd notations (127.1, 0x7f.1) are normalised by the URL parser
    // and DNS never returns them, so an odd form reaching this point is refused rather than guessed at.
    if (ipaddr.IPv4.isValidFourPartDecimal(bare)) parsed = ipaddr.IPv4.parse(bare);
    else if (ipaddr.IPv6.isValid(bare)) parsed = ipaddr.IPv6.parse(bare);
    else return { allowed: false, reason: 'not a plain IP address' };
  } catch {
    return { allowed: false, reason: 'not a plain IP address' };
  }
  return parsed.kind() === 'ipv4' ? judgeV4(parsed as ipaddr.IPv4) : judgeV6(parsed as ipaddr.IPv6);
};

/** Lifts the address check entirely (RENDERGATE_ALLOW_PRIVATE_URLS=1). */
export const anyAddressPolicy: AddressPolicy = () => ({ allowed: true });

/** An IPv4 literal as the URL parser leaves it. */
const DOTTED_QUAD = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/**
 * Why a URL that names its host as a literal IP address can never be reached, when the default policy
 * refuses that address; undefined for a host name (checked when it is resolved, at fetch or
 * delivery) or an allowed address. Lets a webhook URL or an image URL be refused when it is given,
 * before anything is stored or charged.
 */
export function literalAddressRefusal(url: string): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname; // the WHATWG parser normalises 127.1 and 0x7f.1 to dotted quads
  } catch {
    return undefined;
  }
  // The parser gives an IP literal as a dotted quad or a bracketed IPv6 address: anything else is a
  // name, known without ipaddr.js, whose checks throw (and build a stack) inside on every name.
  const v6 = host.startsWith('[');
  if (!v6 && !DOTTED_QUAD.test(host)) return undefined;
  const bare = v6 ? host.slice(1, -1) : host;
  if (!ipaddr.IPv4.isValidFourPartDecimal(bare) && !ipaddr.IPv6.isValid(bare)) return undefined;
  const v = publicAddressPolicy(bare);
  return v.allowed ? undefined : `names ${v.reason}, which is never reached`;
}
