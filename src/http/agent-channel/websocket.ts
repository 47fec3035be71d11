/**
 * The agent channel upgraded to a WebSocket (RFC 6455, the `ws` library; docs/adr/0113-agent-channel.md):
 * the one place that hooks the Node server's 'upgrade' event. Same path, same token and roles
 * as the long poll; the upgrade is admitted through the check-in lane. Each message is one
 * JSON text frame, the EndpointCommandMessage as GET /command-message/{id} answers it. Pings
 * ride the channel's one shared tick; a socket that missed the last ping is closed at the next.
 */
import crypto from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { AppError, ForbiddenError, NotFoundError, ServiceUnavailableError, errorBody } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { EndpointCommandMessage } from '../../resources/commands/model.js';
import type { HeldChannel } from '../../resources/agent-channel/model.js';
import type { AgentChannelService } from '../../resources/agent-channel/service.js';
import type { Admission } from '../admission.js';
import { Access, type OrgTree } from '../../access/access.js';
import { callerKey } from '../../access/principal.js';
import { TOKEN_HEADER, type Authenticator } from '../auth.js';
import type { TokenUse } from '../audit.js';
import { API_PREFIX } from '../routes.js';
import { spreadRetryAfter } from './long-poll.js';

export const AGENT_CHANNEL_PATH = '/agent/channel';

/** Bytes waiting in a socket's send buffer beyond which its peer is taken as stalled (no frame is handed to it). */
const STALLED_BYTES = 1 << 20;
/** The largest frame an agent may send (it sends none the service reads; pings and closes are small). */
const MAX_INBOUND_BYTES = 4096;
/** RFC 6455 close code 1012, "service restart": the agent comes back (to another instance) after the reason's delay. */
const SERVICE_RESTART = 1012;

class WebSocketChannel implements HeldChannel {
  readonly kind = 'WEBSOCKET' as const;
  readonly since = Date.now();
  private alive = true;
  /** The service ended it (not a drop: no grace period starts). */
  endedHere = false;

  constructor(
    readonly endpointId: string,
    readonly access: Access,
    private readonly ws: WebSocket,
  ) {
    ws.on('pong', () => (this.alive = true));
  }

  writable(): boolean {
    return this.ws.readyState === WebSocket.OPEN && this.ws.bufferedAmount < STALLED_BYTES;
  }

  async deliver(messages: EndpointCommandMessage[]): Promise<EndpointCommandMessage[]> {
    const unwritten: EndpointCommandMessage[] = [];
    for (const m of messages) {
      const ok = await new Promise<boolean>((resolve) => this.ws.send(JSON.stringify(m), (err) => resolve(!err)));
      if (!ok) unwritten.push(m);
    }
    return unwritten;
  }

  heartbeat(): void {
    if (!this.alive) {
      this.ws.terminate();
      return;
    }
    this.alive = false;
    this.ws.ping();
  }

  end(why: 'expired' | 'shutdown'): void {
    this.endedHere = true;
    if (why === 'shutdown' && this.ws.readyState === WebSocket.OPEN) this.ws.close(SERVICE_RESTART, `retry-after=${spreadRetryAfter()}`);
    else this.ws.terminate();
  }
}

export interface ChannelUpgradeDeps {
  authenticator: Authenticator;
  /** A token's coarse last use, as every request through the router notes it (src/http/audit.ts). */
  tokens: TokenUse;
  orgs: OrgTree;
  admission: Admission;
  channels: AgentChannelService;
  log: Logger;
  /** False until the indices are set up (then 503). */
  ready: () => boolean;
  /** The client's address as the trusted proxies name it. */
  clientAddress: (req: http.IncomingMessage) => string;
  /** Store errors → AppErrors. */
  translate: (err: unknown) => unknown;
}

export interface ChannelUpgrade {
  /** The server's 'upgrade' listener. */
  handle(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
}

/** Answers a refused upgrade as plain HTTP with the section-7 body, and closes the socket. */
function refuse(socket: Duplex, err: AppError, path: string): void {
  const body = JSON.stringify(errorBody(err, path, { requestId: crypto.randomUUID() }));
  const headers = [
    `HTTP/1.1 ${err.status} ${errorBody(err, path).error}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'cache-control: no-store',
    'connection: close',
    ...Object.entries(err.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
  ];
  socket.end(`${headers.join('\r\n')}\r\n\r\n${body}`);
}

/**
 * The channel of an upgraded socket and its listeners. Built outside the upgrade's scope so that
 * the listeners, which live as long as the socket, do not keep the upgrade request (its headers,
 * the agent's token among them, and the bytes read with it) for the life of the channel.
 */
function held(ws: WebSocket, endpointId: string, access: Access, channels: AgentChannelService): WebSocketChannel {
  const ch = new WebSocketChannel(endpointId, access, ws);
  ws.on('error', ignore);
  ws.once('close', () => channels.close(ch, !ch.endedHere));
  return ch;
}

function ignore(): void {}

export function agentChannelUpgrade(deps: ChannelUpgradeDeps): ChannelUpgrade {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_INBOUND_BYTES, clientTracking: false });
  const fullPath = `${API_PREFIX}${AGENT_CHANNEL_PATH}`;

  /** Resolves once the channel is held; throws (before the handshake only) what the upgrade is refused with. */
  async function upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer, path: string): Promise<void> {
    if (path !== fullPath) throw new NotFoundError(`no WebSocket at ${path}`);
    if (!deps.ready()) throw new ServiceUnavailableError('the service is setting up its indices; retry later');
    const raw = req.headers[TOKEN_HEADER];
    const principal = await deps.authenticator.authenticate(typeof raw === 'string' && raw !== '' ? raw : undefined, deps.clientAddress(req));
    const endpointId = principal.endpointId;
    if (principal.role !== 'agent' || !endpointId) throw new ForbiddenError(`role ${principal.role} may not hold an agent channel`);
    if (principal.tokenId) deps.tokens.recordUse(principal.tokenId);
    const access = new Access(principal, deps.orgs, ['agent']);
    await deps.admission.run('checkin', callerKey(principal), async () => {
      const ws = await new Promise<WebSocket>((resolve) => wss.handleUpgrade(req, socket, head, resolve));
      // The check-in's delivery pass never throws: a store failure is retried by the shared tick.
      await deps.channels.open(held(ws, endpointId, access, deps.channels));
    });
  }

  return {
    handle(req, socket, head) {
      socket.on('error', ignore);
      const path = (req.url ?? '/').split('?')[0];
      upgrade(req, socket, head, path).catch((err: unknown) => {
        const e = deps.translate(err);
        if (!(e instanceof AppError)) deps.log.warn({ err: { message: (err as Error).message } }, 'agent channel upgrade failed');
        // Never a 5xx other than 503 with Retry-After.
        const answer = e instanceof AppError && (e.status < 500 || e.status === 503) ? e : new ServiceUnavailableError('the agent channel could not be taken up; retry later', spreadRetryAfter());
        if (!socket.destroyed) refuse(socket, answer, path);
      });
    },
  };
}
