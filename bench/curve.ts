/**
 * The curve across data-set sizes, from the results files of `npm run bench -- --size S`:
 *
 *   node --import tsx bench/curve.ts <14k.json> <140k.json> <1.4m.json> [--svg bench/results/curve.svg]
 *
 * Prints a markdown table (throughput and p99 at 70 % per scenario and size, the 1.4M ÷ 140k
 * ratios, the overviews, organization create, peak RSS) and writes an SVG chart of both
 * figures against the size (log scales).
 */
import fs from 'node:fs';
import path from 'node:path';

interface ScenarioFigures {
  name: string;
  service: { rps: number };
  at70: { p99: number };
  hop?: { rps: number };
}

interface Overview {
  p50: number;
  p99: number;
}

interface Results {
  sizeName?: string;
  size: { agents: number; utm: number; lte: number };
  servicePeakRssMb?: number;
  results: ScenarioFigures[];
  overview?: Overview;
  overviewDistributor?: Overview;
  orgCreateAtSize?: { organizations: number; p50: number; p99: number };
}

const args = process.argv.slice(2);
const svgAt = args.indexOf('--svg');
const svgFile = svgAt >= 0 ? args[svgAt + 1] : undefined;
const files = args.filter((a, k) => !a.startsWith('--') && (svgAt < 0 || k !== svgAt + 1));
if (files.length === 0) {
  console.error('usage: bench/curve.ts <results.json>… [--svg out.svg]');
  process.exit(2);
}
const runs = files.map((f) => ({ file: path.basename(f), r: JSON.parse(fs.readFileSync(f, 'utf8')) as Results }));
const endpoints = (r: Results): number => r.size.agents + r.size.utm + r.size.lte;
runs.sort((a, b) => endpoints(a.r) - endpoints(b.r));
const label = (r: Results): string => r.sizeName?.replace('m', 'M') ?? `${endpoints(r)}`;
const names = [...new Set(runs.flatMap(({ r }) => r.results.map((s) => s.name)))];
const fig = (r: Results, name: string): ScenarioFigures | undefined => r.results.find((s) => s.name === name);
const n0 = (x: number | undefined): string => (x === undefined || Number.isNaN(x) ? '–' : Math.round(x).toLocaleString('en-US'));
const n1 = (x: number | undefined): string => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(1));
const ratio = (a: number | undefined, b: number | undefined): string => (a === undefined || b === undefined || b === 0 ? '–' : (a / b).toFixed(2));
const last = runs[runs.length - 1]?.r;
const mid = runs.length >= 2 ? runs[runs.length - 2]?.r : undefined;

const head = runs.map(({ r }) => label(r));
const lines: string[] = [
  `| scenario | req/s ${head.join(' / ')} | ${head.at(-1)} ÷ ${head.at(-2) ?? ''} | ÷ bare hop ${head.join(' / ')} | p99 at 70 % ms ${head.join(' / ')} | ${head.at(-1)} ÷ ${head.at(-2) ?? ''} |`,
  '|---|---|---|---|---|---|',
];
for (const name of names) {
  const per = runs.map(({ r }) => fig(r, name));
  lines.push(
    `| ${name} | ${per.map((s) => n0(s?.service.rps)).join(' / ')} | ${ratio(last && fig(last, name)?.service.rps, mid && fig(mid, name)?.service.rps)} | ${per
      .map((s) => ratio(s?.service.rps, s?.hop?.rps))
      .join(' / ')} | ${per.map((s) => n0(s?.at70.p99)).join(' / ')} | ${ratio(last && fig(last, name)?.at70.p99, mid && fig(mid, name)?.at70.p99)} |`,
  );
}
const row = (what: string, f: (r: Results) => number | undefined, digits: (x: number | undefined) => string = n1): string =>
  `| ${what} | ${runs.map(({ r }) => digits(f(r))).join(' / ')} | ${ratio(last && f(last), mid && f(mid))} | | | |`;
lines.push(row('overview, root MSP admin, 8 viewers: p99 ms', (r) => r.overview?.p99));
lines.push(row('overview, distributor admin, 8 viewers: p99 ms', (r) => r.overviewDistributor?.p99));
lines.push(row('organization create p50 ms (one caller)', (r) => r.orgCreateAtSize?.p50));
lines.push(row('organizations in the tree', (r) => r.orgCreateAtSize?.organizations, n0));
lines.push(row('service peak RSS MB', (r) => r.servicePeakRssMb, n0));
console.log(`${lines.join('\n')}\n\nFiles: ${runs.map(({ file }) => file).join(', ')}`);

if (svgFile) fs.writeFileSync(svgFile, chart());

/** Two panels (throughput, p99 at 70 %) against the size, log–log, one line per scenario. */
function chart(): string {
  const W = 980;
  const H = 420;
  const panelW = 360;
  const panelH = 300;
  const top = 40;
  const lefts = [70, 70 + panelW + 90];
  const colours = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#637939'];
  const xs = runs.map(({ r }) => endpoints(r));
  const lx = (x: number): number => Math.log10(x);
  const [xMin, xMax] = [lx(Math.min(...xs)) - 0.15, lx(Math.max(...xs)) + 0.15];
  const esc = (t: string): string => t.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H + 14 * names.length}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
  ];
  const panels: { title: string; value: (s: ScenarioFigures) => number }[] = [
    { title: 'throughput, req/s (log)', value: (s) => s.service.rps },
    { title: 'p99 at 70 % of the best rate, ms (log)', value: (s) => s.at70.p99 },
  ];
  panels.forEach((p, k) => {
    const left = lefts[k] as number;
    const values = runs.flatMap(({ r }) => r.results.map(p.value)).filter((v) => v > 0);
    const yMin = Math.floor(Math.log10(Math.min(...values)));
    const yMax = Math.ceil(Math.log10(Math.max(...values)));
    const px = (x: number): number => left + ((lx(x) - xMin) / (xMax - xMin)) * panelW;
    const py = (y: number): number => top + panelH - ((Math.log10(y) - yMin) / Math.max(1, yMax - yMin)) * panelH;
    out.push(`<text x="${left}" y="${top - 14}" font-size="13" font-weight="bold">${esc(p.title)}</text>`);
    out.push(`<rect x="${left}" y="${top}" width="${panelW}" height="${panelH}" fill="none" stroke="#999"/>`);
    for (let e = yMin; e <= yMax; e++) {
      const y = py(10 ** e);
      out.push(`<line x1="${left}" y1="${y}" x2="${left + panelW}" y2="${y}" stroke="#eee"/>`);
      out.push(`<text x="${left - 6}" y="${y + 4}" text-anchor="end">${(10 ** e).toLocaleString('en-US')}</text>`);
    }
    runs.forEach(({ r }, j) => {
      const x = px(xs[j] as number);
      out.push(`<line x1="${x}" y1="${top}" x2="${x}" y2="${top + panelH}" stroke="#eee"/>`);
      out.push(`<text x="${x}" y="${top + panelH + 16}" text-anchor="middle">${esc(label(r))}</text>`);
    });
    out.push(`<text x="${left + panelW / 2}" y="${top + panelH + 32}" text-anchor="middle">endpoints in the data set</text>`);
    names.forEach((name, i) => {
      const pts = runs
        .map(({ r }, j) => ({ x: xs[j] as number, s: fig(r, name) }))
        .filter((q): q is { x: number; s: ScenarioFigures } => q.s !== undefined && p.value(q.s) > 0)
        .map((q) => `${px(q.x).toFixed(1)},${py(p.value(q.s)).toFixed(1)}`);
      const c = colours[i % colours.length] as string;
      out.push(`<polyline points="${pts.join(' ')}" fill="none" stroke="${c}" stroke-width="2"/>`);
      for (const pt of pts) {
        const [cx, cy] = pt.split(',');
        out.push(`<circle cx="${cx}" cy="${cy}" r="3" fill="${c}"/>`);
      }
    });
  });
  names.forEach((name, i) => {
    const y = top + panelH + 56 + i * 14;
    const c = colours[i % colours.length] as string;
    out.push(`<line x1="70" y1="${y - 4}" x2="90" y2="${y - 4}" stroke="${c}" stroke-width="2"/><text x="96" y="${y}">${esc(name)}</text>`);
  });
  out.push(`<text x="${W - 10}" y="${H + 14 * names.length - 6}" text-anchor="end" fill="#666">${esc(runs.map(({ file }) => file).join(', '))}</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
