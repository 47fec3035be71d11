/**
 * What survives a scavenge, by where it was allocated: attaches to a Node process started with
 * `--inspect`, samples its allocations for a window with V8's sampling heap profiler told to
 * forget what a scavenge collects (so what is left was alive at a scavenge: copied, promoted,
 * or still live), and prints the sampled bytes by allocating function and by the first frame of
 * the service's own code on the allocation's stack.
 *
 *   BENCH_NODE_FLAGS="--inspect=127.0.0.1:9229" npm run bench -- --size 140k --reuse --short \
 *     --no-direct "software inventory replace (200 items, u" &
 *   npm run bench:survivors -- --port 9229 --seconds 10    # once the scenario's warm-up has begun
 *
 * The bench passes BENCH_NODE_FLAGS to the service only, so the hop keeps its port free. A
 * window's figures are for comparing two builds under the same load, not absolute: the inspector
 * and the sampling cost the service some of its rate.
 */
import { parseArgs } from 'node:util';
import WebSocket from 'ws';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '9229' },
    seconds: { type: 'string', default: '10' },
    top: { type: 'string', default: '20' },
  },
});

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

const targets = (await (await fetch(`http://127.0.0.1:${values.port}/json`)).json()) as { webSocketDebuggerUrl: string }[];
const first = targets[0];
if (!first) throw new Error(`no inspector target on port ${values.port}`);
const ws = new WebSocket(first.webSocketDebuggerUrl);
await new Promise<void>((resolve, reject) => {
  ws.once('open', () => resolve());
  ws.once('error', reject);
});

let next = 0;
const pending = new Map<number, (msg: { result?: unknown; error?: unknown }) => void>();
ws.on('message', (data: Buffer) => {
  const msg = JSON.parse(data.toString('utf8')) as { id?: number; result?: unknown; error?: unknown };
  if (msg.id === undefined) return;
  pending.get(msg.id)?.(msg);
  pending.delete(msg.id);
});
function send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
  const id = ++next;
  return new Promise<T>((resolve, reject) => {
    pending.set(id, (msg) => (msg.error ? reject(new Error(`${method}: ${JSON.stringify(msg.error)}`)) : resolve(msg.result as T)));
    ws.send(JSON.stringify({ id, method, params }));
  });
}

await send('HeapProfiler.enable');
await send('HeapProfiler.startSampling', {
  samplingInterval: 4096,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: false,
});
await new Promise((resolve) => setTimeout(resolve, Number(values.seconds) * 1000));
const { profile } = await send<{ profile: { head: ProfileNode } }>('HeapProfiler.stopSampling');
ws.close();

const frame = (n: ProfileNode): string =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/.*\/(dist|src|node_modules)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;
const byFunction = new Map<string, number>();
const byOwnFrame = new Map<string, number>();
let total = 0;
const add = (to: Map<string, number>, key: string, bytes: number): void => {
  to.set(key, (to.get(key) ?? 0) + bytes);
};
function walk(node: ProfileNode, own: string): void {
  const here = frame(node);
  const ownHere = /\/(dist|src)\//.test(node.callFrame.url) && !node.callFrame.url.includes('node_modules') ? here : own;
  if (node.selfSize > 0) {
    total += node.selfSize;
    add(byFunction, here, node.selfSize);
    add(byOwnFrame, ownHere, node.selfSize);
  }
  for (const c of node.children) walk(c, ownHere);
}
walk(profile.head, '(no frame of the service)');

const mb = (b: number): string => (b / 1e6).toFixed(1).padStart(8);
const top = Number(values.top);
console.log(`sampled bytes alive at a scavenge over ${values.seconds} s: ${mb(total).trim()} MB`);
console.log('\nby allocating function:');
for (const [k, v] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${mb(v)} MB  ${k}`);
console.log("\nby the innermost frame of the service's own code:");
for (const [k, v] of [...byOwnFrame].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${mb(v)} MB  ${k}`);
