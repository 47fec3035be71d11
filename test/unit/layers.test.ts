/**
 * The layer order holds by itself: `npm run lint` runs dependency-cruiser with
 * .dependency-cruiser.cjs, which refuses an import cycle and an import against the layer order
 * (docs/adr/0119-layers-enforced-by-dependency-cruiser.md). Planted violations in a small tree,
 * cruised with the repository's own rules, prove the rules bite (the lint step itself checks src/).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';

const root = path.resolve(import.meta.dirname, '..', '..');
const depcruise = path.join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

function run(cwd: string, dirs: string[], outputType: 'json' | 'err') {
  return spawnSync(process.execPath, [depcruise, ...dirs, '--config', path.join(root, '.dependency-cruiser.cjs'), '--output-type', outputType], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** Cruises `dirs` under `cwd` with the repository's rules: the errors and the violations found. */
function cruise(cwd: string, dirs: string[]): { errors: number; violations: Violation[]; stderr: string } {
  const out = run(cwd, dirs, 'json');
  const summary = out.stdout ? (JSON.parse(out.stdout) as { summary: { error: number; violations: Violation[] } }).summary : undefined;
  return { errors: summary?.error ?? -1, violations: summary?.violations ?? [], stderr: out.stderr };
}

/** The exit code of the lint step's own invocation (the `err` reporter exits non-zero on an error). */
function lintStatus(cwd: string, dirs: string[]): number | null {
  return run(cwd, dirs, 'err').status;
}

/** A small tree laid out like src/, with `files` (path → source). */
function plant(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ecs-layers-'));
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['src'] }),
  );
  for (const [file, source] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), source);
  }
  return dir;
}

describe('layers: the lint step refuses import cycles and imports against the layer order', function () {
  this.timeout(60_000);
  const planted: string[] = [];
  after(() => {
    for (const dir of planted) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a cycle (type-only imports included) and imports up the layers, and the lint step exits non-zero', () => {
    const dir = plant({
      // A cycle through types only.
      'src/store/a.ts': "import type { B } from './b.js';\nexport interface A { b?: B }\n",
      'src/store/b.ts': "import type { A } from './a.js';\nexport interface B { a?: A }\n",
      // Arrows up: a service importing http, a store naming a resource, a leaf importing the store.
      'src/errors.ts': 'export class AppError extends Error {}\n',
      'src/http/auth.ts': "import { AppError } from '../errors.js';\nexport const fail = (): AppError => new AppError();\n",
      'src/resources/things/routes.ts': "import { fail } from '../../http/auth.js';\nexport const routes = [fail];\n",
      'src/resources/things/service.ts': "import { fail } from '../../http/auth.js';\nexport const service = fail;\n",
      'src/store/doc-store.ts': "import { service } from '../resources/things/service.js';\nexport const store = service;\n",
      'src/config.ts': "import { store } from './store/doc-store.js';\nexport const config = store;\n",
    });
    planted.push(dir);
    const { errors, violations } = cruise(dir, ['src']);
    expect(errors).to.be.greaterThan(0);
    const found = violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
    expect(found).to.include('no-cycle: src/store/a.ts → src/store/b.ts');
    expect(found).to.include('http-below-the-top-only: src/resources/things/service.ts → src/http/auth.ts');
    expect(found).to.include('resources-not-from-below: src/store/doc-store.ts → src/resources/things/service.ts');
    expect(found).to.include('leaves-import-only-leaves: src/config.ts → src/store/doc-store.ts');
    // A resource's routes are its HTTP adapter: they may import http.
    expect(found.filter((f) => f.includes('routes.ts'))).to.deep.equal([]);
    expect(lintStatus(dir, ['src']), 'the lint step exits non-zero').to.not.equal(0);
  });

  it('passes a tree that keeps the order', () => {
    const dir = plant({
      'src/errors.ts': 'export class AppError extends Error {}\n',
      'src/store/doc-store.ts': "import { AppError } from '../errors.js';\nexport const store = (): AppError => new AppError();\n",
      'src/resources/things/service.ts': "import { store } from '../../store/doc-store.js';\nexport const service = store;\n",
      'src/http/auth.ts': "import { service } from '../resources/things/service.js';\nexport const auth = service;\n",
    });
    planted.push(dir);
    expect(lintStatus(dir, ['src'])).to.equal(0);
  });
});
