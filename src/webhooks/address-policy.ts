import { BlockList, isIP } from "node:net";

/**
 * Which destinations a webhook may reach (docs/webhooks.md, "Addresses"). Unless
 * `webhooks.allowPrivateAddresses` is on, a URL may not name, nor resolve to, an address inside
 * the platform: loopback, private, carrier-grade NAT, link-local (cloud metadata at
 * 169.254.169.254), unspecified, multicast, reserved, and their IPv6 forms.
 */
const INTERNAL = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  INTERNAL.addSubnet(network, prefix, "ipv4");
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const)
  INTERNAL.addSubnet(network, prefix, "ipv6");

/** True when `address` (an IP literal) is internal; an IPv4-mapped IPv6 address is judged as IPv4. */
export function isInternalAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return INTERNAL.check(mapped[1] as string, "ipv4");
  const family = isIP(address);
  if (family === 0) return true;
  return INTERNAL.check(address, family === 4 ? "ipv4" : "ipv6");
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
  if (isIP(host) !== 0 && isInternalAddress(host))
    return `must not name an internal address (${host}; webhooks.allowPrivateAddresses is off)`;
  return null;
}
