import { BlockList, isIP } from "node:net";

/**
 * Which destinations a webhook may reach (docs/webhooks.md, "Addresses"). Unless
 * `webhooks.allowPrivateAddresses` is on, a URL may not name, nor resolve to, an address inside
 * the platform: loopback, private, carrier-grade NAT, link-local (cloud metadata at
 * 169.254.169.254), unspecified, multicast, reserved, documentation and benchmarking ranges, and
 * every IPv6 form of them. An IPv6 address that carries an IPv4 address (IPv4-mapped, SIIT,
 * IPv4-compatible, NAT64 well-known prefix, 6to4) is judged by the IPv4 address it carries: on a
 * cluster with NAT64 or a 6to4 relay it reaches exactly that IPv4 host.
 */
const INTERNAL_V4 = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  INTERNAL_V4.addSubnet(network, prefix, "ipv4");

/**
 * IPv6 ranges refused outright, whatever follows the prefix: special-purpose ranges that are not
 * global, and translation prefixes whose IPv4 part cannot be read reliably (the local-use NAT64
 * prefix of RFC 8215 is the operator's own network by definition; Teredo obfuscates its IPv4).
 */
const INTERNAL_V6 = new BlockList();
for (const [network, prefix] of [
  ["::1", 128],
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001::", 32],
  ["2001:2::", 48],
  ["2001:db8::", 32],
  ["3fff::", 20],
  ["5f00::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const)
  INTERNAL_V6.addSubnet(network, prefix, "ipv6");

/** True when `address` (an IP literal; anything else counts as internal) may not be reached. */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return INTERNAL_V4.check(address, "ipv4");
  if (family !== 6) return true;
  const bytes = ipv6Bytes(address);
  if (!bytes) return true;
  const embedded = embeddedIpv4(bytes);
  if (embedded) return INTERNAL_V4.check(embedded, "ipv4");
  return INTERNAL_V6.check(address, "ipv6");
}

/**
 * The IPv4 address an IPv6 address carries, or null: `::ffff:a.b.c.d` (IPv4-mapped),
 * `::ffff:0:a.b.c.d` (SIIT), `::a.b.c.d` (IPv4-compatible, so `::` and `::1` too),
 * `64:ff9b::a.b.c.d` (NAT64 well-known prefix) and `2002:aabb:ccdd::/48` (6to4).
 */
export function embeddedIpv4(bytes: Uint8Array): string | null {
  const zero = (from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);
  const quad = (at: number) => Array.from(bytes.subarray(at, at + 4)).join(".");
  const word = (at: number) => ((bytes[at] as number) << 8) | (bytes[at + 1] as number);
  if (zero(0, 10) && word(10) === 0xffff) return quad(12);
  if (zero(0, 8) && word(8) === 0xffff && word(10) === 0) return quad(12);
  if (zero(0, 12)) return quad(12);
  if (word(0) === 0x64 && word(2) === 0xff9b && zero(4, 12)) return quad(12);
  if (word(0) === 0x2002) return quad(2);
  return null;
}

/** The 16 bytes of an IPv6 literal (with `::` and an optional dotted IPv4 tail), or null. */
export function ipv6Bytes(address: string): Uint8Array | null {
  let text = address.toLowerCase();
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  const words: number[] = [];
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const parts = tail.slice(1).map(Number);
    if (parts.some((p) => p > 255)) return null;
    text = `${text.slice(0, tail.index)}${((parts[0] as number) * 256 + (parts[1] as number)).toString(16)}:${((parts[2] as number) * 256 + (parts[3] as number)).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (half: string | undefined) =>
    half ? half.split(":").map((w) => (/^[0-9a-f]{1,4}$/.test(w) ? Number.parseInt(w, 16) : Number.NaN)) : [];
  const head = parse(halves[0]);
  const rest = parse(halves[1]);
  if (halves.length === 2) {
    const fill = 8 - head.length - rest.length;
    if (fill < 1) return null;
    words.push(...head, ...new Array<number>(fill).fill(0), ...rest);
  } else words.push(...head);
  if (words.length !== 8 || words.some(Number.isNaN)) return null;
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[2 * i] = w >> 8;
    bytes[2 * i + 1] = w & 0xff;
  });
  return bytes;
}

/** Why a URL is refused, or null when it may be used. Checks what is knowable without DNS. */
export function urlRefusal(raw: string, allowPrivateAddresses: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must use http or https";
  if (url.username || url.password) return "must not carry credentials (use the signing secret)";
  if (allowPrivateAddresses) return null;
  // A trailing dot names the same host (`localhost.`): judged without it.
  const host = url.hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost"))
    return "must not name localhost (webhooks.allowPrivateAddresses is off)";
  if (isIP(host) !== 0 && isInternalAddress(host)) {
    const bytes = isIP(host) === 6 ? ipv6Bytes(host) : null;
    const carried = bytes ? embeddedIpv4(bytes) : null;
    const what = carried ? `${host}, which carries IPv4 ${carried}` : host;
    return `must not name an internal address (${what}; webhooks.allowPrivateAddresses is off)`;
  }
  return null;
}
