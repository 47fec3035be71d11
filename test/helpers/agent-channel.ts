/**
 * Simulated agents on the agent channel (GET /agent/channel): an endpoint with its own agent
 * token, its long polls, and its WebSocket with the frames it received.
 */
import { expect } from 'chai';
import WebSocket from 'ws';
import { P, type Api } from './http.js';
import type { TestApp } from './app.js';
import { uid } from './app.js';

export interface ChannelMessage {
  id: string;
  status: string;
  endpointId: string;
  uuid: string;
  createdAt: string;
  version: { sequenceNumber: number; primaryTerm: number };
}

export interface SimAgent {
  endpointId: string;
  orgId: string;
  token: string;
  api: Api;
}

/** An agent endpoint in `orgId` (CONNECTED through its own token) with its agent token. */
export async function simAgent(t: TestApp, orgId: string): Promise<SimAgent> {
  const ep = await t.world.endpoint(orgId, { hostInfo: { os: 'windows', hostName: uid('host') } });
  const token = await t.world.token('agent', orgId, ep.id);
  const api = t.world.as(token);
  const res = await api.post(`/endpoint/${ep.id}/connect`);
  expect(res.status, res.text).to.equal(204);
  return { endpointId: ep.id, orgId, token, api };
}

/** One long poll of the agent's channel (through the checked client: the answer must conform to the document). */
export function longPoll(api: Api, wait?: number): Promise<{ status: number; body: ChannelMessage[]; text: string; headers: Headers }> {
  return api.get<ChannelMessage[]>(`/agent/channel${wait === undefined ? '' : `?wait=${wait}`}`);
}

/** A held WebSocket of one agent and the frames it received. */
export class SimSocket {
  readonly frames: ChannelMessage[] = [];
  closed = false;
  closeCode: number | undefined;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      expect(isBinary, 'a text frame').to.equal(false);
      this.frames.push(JSON.parse(data.toString()) as ChannelMessage);
    });
    ws.on('close', (code) => {
      this.closed = true;
      this.closeCode = code;
    });
  }

  /** Opens the agent's channel as a WebSocket; rejects with the refused upgrade's status. */
  static open(base: string, token: string | undefined, localAddress?: string): Promise<SimSocket> {
    const url = `${base.replace(/^http/, 'ws')}${P}/agent/channel`;
    const ws = new WebSocket(url, { headers: token ? { 'x-auth-token': token } : {}, perMessageDeflate: false, ...(localAddress ? { localAddress } : {}) });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new SimSocket(ws)));
      ws.once('unexpected-response', (_req, res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode} ${text}`), { status: res.statusCode, body: text, headers: res.headers })));
      });
      ws.once('error', (err) => reject(err));
    });
  }

  close(): void {
    this.ws.close();
  }

  /** Drops the connection without a closing handshake (a pulled cable, a killed agent). */
  drop(): void {
    this.ws.terminate();
  }
}

/** Creates a raw command message for an endpoint through `as`; returns it (asserting 201). */
export async function createMessage(as: Api, endpointId: string, extra: Record<string, unknown> = {}): Promise<ChannelMessage> {
  const res = await as.post<ChannelMessage>(`/command-message/endpoint/${endpointId}`, { module: 'cmd', name: 'ping', ...extra });
  expect(res.status, res.text).to.equal(201);
  return res.body;
}
