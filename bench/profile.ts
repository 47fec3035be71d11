/**
 * Summarizes a V8 CPU profile (`node --cpu-prof`): self time by package / module and the
 * hottest functions, as a share of the busy (non-idle) time. `npm run bench -- --profile`
 * prints it for the service; by hand: `node --import tsx bench/profile.ts <file.cpuprofile>`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  idleMs: number;
  busyMs: number;
  byCategory: { name: string; ms: number; share: number }[];
  topFunctions: { name: string; where: string; ms: number; share: number }[];
}

const SPECIAL = new Set(['(garbage collector)', '(program)', '(idle)', '(root)']);

/** The package (node_modules), Node module (node:…) or project file a frame belongs to. */
export function category(frame: ProfileNode['callFrame']): string {
  if (SPECIAL.has(frame.functionName) && !frame.url) return frame.functionName;
  const url = frame.url;
  if (!url) return '(native / builtins)';
  if (url.startsWith('node:')) return url.replace(/^node:(internal\/)?/, 'node:').replace(/\/.*$/, '');
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const m = /\/(dist|src)\/(.*)$/.exec(url);
  if (m) return `service: ${m[2].replace(/\.(js|ts)$/, '')}`;
  return path.basename(url);
}

export function summarize(file: string, top = 25): ProfileSummary {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < prof.samples.length; i++) {
    // timeDeltas[i + 1] is the time spent in sample i (until the next sample).
    const dt = prof.timeDeltas[i + 1] ?? 0;
    selfUs.set(prof.samples[i], (selfUs.get(prof.samples[i]) ?? 0) + dt);
  }
  let total = 0;
  let idle = 0;
  const cats = new Map<string, number>();
  const fns = new Map<string, { where: string; us: number }>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    total += us;
    if (node.callFrame.functionName === '(idle)') {
      idle += us;
      continue;
    }
    const cat = category(node.callFrame);
    cats.set(cat, (cats.get(cat) ?? 0) + us);
    const name = node.callFrame.functionName || '(anonymous)';
    const where = node.callFrame.url ? `${cat}:${node.callFrame.lineNumber + 1}` : cat;
    const key = `${name} ${where}`;
    const f = fns.get(key) ?? { where, us: 0 };
    f.us += us;
    fns.set(key, f);
  }
  const busy = total - idle;
  const share = (us: number): number => (busy > 0 ? us / busy : 0);
  return {
    file,
    totalMs: total / 1000,
    idleMs: idle / 1000,
    busyMs: busy / 1000,
    byCategory: [...cats].sort((a, b) => b[1] - a[1]).map(([name, us]) => ({ name, ms: us / 1000, share: share(us) })),
    topFunctions: [...fns]
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, top)
      .map(([key, f]) => ({ name: key.slice(0, key.length - f.where.length - 1), where: f.where, ms: f.us / 1000, share: share(f.us) })),
  };
}

export function formatSummary(s: ProfileSummary, categories = 20): string {
  const pct = (x: number): string => `${(100 * x).toFixed(1)} %`;
  const lines = [
    `profile ${s.file}: ${(s.totalMs / 1000).toFixed(1)} s sampled, busy ${(s.busyMs / 1000).toFixed(1)} s, idle ${(s.idleMs / 1000).toFixed(1)} s`,
    'self time by package / module (share of busy time):',
    ...s.byCategory.slice(0, categories).map((c) => `  ${pct(c.share).padStart(7)}  ${c.ms.toFixed(0).padStart(7)} ms  ${c.name}`),
    'hottest functions (self time):',
    ...s.topFunctions.map((f) => `  ${pct(f.share).padStart(7)}  ${f.ms.toFixed(0).padStart(7)} ms  ${f.name}  (${f.where})`),
  ];
  return lines.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const f of process.argv.slice(2)) console.log(formatSummary(summarize(f)));
}
