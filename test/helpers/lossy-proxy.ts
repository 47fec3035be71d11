/**
 * A pass-through proxy to Elasticsearch (a new upstream connection per request) with one-shot
 * faults, for the failures a degraded cluster causes: an answer lost after Elasticsearch did
 * the write, a write Elasticsearch re-sends (done twice, the client sees the second answer).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LossyProxy {
  url: string;
  /** The next request matching `re` is done by Elasticsearch, but its answer never reaches the service. */
  loseAnswerOfNext(re: RegExp): void;
  /**
   * The next request matching `re` is sent to Elasticsearch twice, one after the other, and the
   * service gets the second answer: what a re-send inside the cluster looks like to its client.
   */
  resendNext(re: RegExp): void;
  /** Runs `effect` (freezing the node) just before the next request matching `re` is forwarded. */
  beforeNext(re: RegExp, effect: () => void): void;
  /** Answers lost so far. */
  lost: number;
  /** Requests re-sent so far, with the status of each first and second answer. */
  resent: { line: string; first: number; second: number }[];
  close(): Promise<void>;
}

interface Upstream {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export async function startLossyProxy(upstream: string): Promise<LossyProxy> {
  const target = new URL(upstream);
  let lose: RegExp | undefined;
  let resend: RegExp | undefined;
  let before: { re: RegExp; effect: () => void } | undefined;
  const state = { lost: 0, resent: [] as LossyProxy['resent'] };

  const forward = (req: http.IncomingMessage, body: Buffer): Promise<Upstream> =>
    new Promise((resolve, reject) => {
      const up = http.request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers, agent: false },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      up.on('error', reject);
      up.end(body);
    });

  const server = http.createServer((req, res) => {
    const line = `${req.method} ${req.url}`;
    if (before?.re.test(line)) {
      const { effect } = before;
      before = undefined;
      effect();
    }
    const twice = resend?.test(line) ?? false;
    if (twice) resend = undefined;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      void (async () => {
        let answer = await forward(req, body);
        if (twice) {
          const first = answer.status;
          answer = await forward(req, body);
          state.resent.push({ line, first, second: answer.status });
        }
        if (lose?.test(line)) {
          lose = undefined;
          state.lost++;
          res.socket?.destroy();
          return;
        }
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
      })().catch(() => res.socket?.destroy());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    loseAnswerOfNext: (re) => {
      lose = re;
    },
    resendNext: (re) => {
      resend = re;
    },
    beforeNext: (re, effect) => {
      before = { re, effect };
    },
    get lost() {
      return state.lost;
    },
    get resent() {
      return state.resent;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
