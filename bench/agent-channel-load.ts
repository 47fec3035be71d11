/**
 * One load-generator process of the agent-channel bench (bench/agent-channel.ts): holds its
 * slice of agents on the service, half WebSocket and half long poll, from its own loopback
 * source address, as agents do — reconnecting with backoff and jitter, honouring Retry-After.
 * Reads its agents from the JSON file named by argv[2]; takes a new service URL as a JSON line
 * on stdin ({"url": …}); reports a JSON line every 500 ms on stdout: agents held and the
 * latencies (command created → frame or answer received) of the deliveries since the last line.
 */
import http from 'node:http';
import fs from 'node:fs';
import readline from 'node:readline';
import WebSocket from 'ws';

interface Slice {
  url: string;
  localAddress: string;
  /** Agent tokens; even positions hold a WebSocket, odd ones long polls. */
  tokens: string[];
  waitSeconds: number;
}

interface Delivered {
  id: string;
  createdAt: string;
}

const slice = JSON.parse(fs.readFileSync(process.argv[2], 'utf8')) as Slice;
const PATH = '/endpoint-control-service/v1/agent/channel';
let base = slice.url;
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: Infinity, localAddress: slice.localAddress } as http.AgentOptions);

let held = 0;
let latencies: number[] = [];
let ids: string[] = [];
let errors = 0;

function record(messages: Delivered[]): void {
  const now = Date.now();
  for (const m of messages) {
    latencies.push(now - Date.parse(m.createdAt));
    ids.push(m.id);
  }
}

/**
 * As docs/api.md tells agents: the server's Retry-After plus up to a second of jitter when it
 * gave one, else backoff with full jitter, 0…min(cap, 1 s × 2^failures).
 */
function delayMs(failures: number, retryAfterSeconds?: number): number {
  if (retryAfterSeconds !== undefined) return retryAfterSeconds * 1000 + Math.random() * 1000;
  const cap = Math.min(60_000, 1000 * 2 ** Math.min(failures, 6));
  return Math.random() * cap;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function holdSocket(token: string): void {
  let failures = 0;
  const open = (): void => {
    const ws = new WebSocket(base.replace(/^http/, 'ws') + PATH, { headers: { 'x-auth-token': token }, perMessageDeflate: false, localAddress: slice.localAddress });
    let opened = false;
    let retryAfter: number | undefined;
    ws.on('open', () => {
      opened = true;
      failures = 0;
      held += 1;
    });
    ws.on('message', (data) => record([JSON.parse(data.toString()) as Delivered]));
    ws.on('unexpected-response', (_req, res) => {
      retryAfter = Number(res.headers['retry-after'] ?? 0) || undefined;
      res.resume();
      ws.terminate();
    });
    ws.on('error', () => undefined);
    ws.on('close', (_code, reason) => {
      if (opened) held -= 1;
      else errors += 1;
      const advised = /retry-after=(\d+)/.exec(reason.toString())?.[1];
      const wait = delayMs(opened ? 0 : ++failures, advised ? Number(advised) : retryAfter);
      setTimeout(open, wait);
    });
  };
  open();
}

function poll(token: string): Promise<{ status: number; body: string; retryAfter?: number }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}${PATH}?wait=${slice.waitSeconds}`, { agent: keepAlive, headers: { 'x-auth-token': token } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, retryAfter: Number(res.headers['retry-after'] ?? 0) || undefined }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

async function holdLongPolls(token: string): Promise<void> {
  let failures = 0;
  for (;;) {
    let counted = false;
    const mark = setTimeout(() => {
      // A poll still open after a moment is held (it was not refused).
      counted = true;
      held += 1;
    }, 200);
    try {
      const res = await poll(token);
      clearTimeout(mark);
      if (counted) held -= 1;
      if (res.status === 200) {
        failures = 0;
        record(JSON.parse(res.body) as Delivered[]);
        continue;
      }
      errors += 1;
      await sleep(delayMs(++failures, res.retryAfter));
    } catch {
      clearTimeout(mark);
      if (counted) held -= 1;
      errors += 1;
      await sleep(delayMs(++failures));
    }
  }
}

// Agents start spread over a second, as a fleet's check-ins are.
slice.tokens.forEach((token, i) => {
  setTimeout(() => (i % 2 === 0 ? holdSocket(token) : void holdLongPolls(token)), Math.random() * 1000);
});

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const msg = JSON.parse(line) as { url?: string; exit?: boolean };
  if (msg.url) base = msg.url;
  if (msg.exit) process.exit(0);
});

setInterval(() => {
  process.stdout.write(JSON.stringify({ held, errors, latencies, ids }) + '\n');
  latencies = [];
  ids = [];
}, 500);
