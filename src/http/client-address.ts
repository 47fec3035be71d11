/**
 * The client's address (docs/adr/0092-trusted-proxies.md). A request from one of the trusted
 * reverse proxies (ECS_TRUSTED_PROXIES: addresses and CIDR ranges) names its client in
 * X-Forwarded-For: the address taken is the rightmost hop that is not itself a trusted proxy,
 * since every hop left of it was written by the client and proves nothing. Anyone else's
 * X-Forwarded-For is ignored: the address is the socket's peer. The failed-authentication
 * budget, the access log, the audit trail and the server span all use this one address.
 */
import type http from 'node:http';
import proxyAddr from 'proxy-addr';

export type ClientAddress = (req: http.IncomingMessage) => string;

/** `::ffff:10.0.0.1` and `10.0.0.1` are one client. */
function plain(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

export function clientAddress(trustedProxies: readonly string[]): ClientAddress {
  if (trustedProxies.length === 0) return (req) => plain(req.socket.remoteAddress ?? 'unknown');
  const trust = proxyAddr.compile([...trustedProxies]);
  return (req) => {
    if (req.socket.remoteAddress === undefined) return 'unknown';
    return plain(proxyAddr(req, trust));
  };
}
