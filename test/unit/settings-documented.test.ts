/**
 * The settings tables are true: every environment variable the service reads (its validated
 * configuration, and the few the development tools read directly) has a row in
 * docs/configuration.md's or docs/deploy.md's table, and every row names a variable something reads.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { configVariables } from '../../src/config.js';

const root = path.resolve(import.meta.dirname, '..', '..');

/** Every `NAME` in the first cell of a table row of a document. */
function tableVariables(doc: string): Set<string> {
  const names = new Set<string>();
  for (const line of fs.readFileSync(path.join(root, doc), 'utf8').split('\n')) {
    const first = /^\|([^|]*)\|/.exec(line)?.[1] ?? '';
    for (const m of first.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(m[1]);
  }
  return names;
}

/** Variables read straight from process.env anywhere in src/ (the development tools). */
function readDirectly(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, e.name);
      if (e.isDirectory()) walk(file);
      else if (e.name.endsWith('.ts')) {
        for (const m of fs.readFileSync(file, 'utf8').matchAll(/process\.env\.([A-Z][A-Z0-9_]+)/g)) names.add(m[1]);
      }
    }
  };
  walk(path.join(root, 'src'));
  // The process's own search path and Node's options are not settings of the service.
  for (const os of ['PATH', 'NODE_OPTIONS']) names.delete(os);
  return names;
}

describe('settings tables', () => {
  const documented = new Set([...tableVariables('docs/configuration.md'), ...tableVariables('docs/deploy.md')]);

  it('document every variable the configuration reads', () => {
    const read = configVariables();
    expect(read).to.include.members(['ECS_INDEX_PREFIX', 'ECS_SCHEMA_CHECK_SECONDS', 'OTEL_BSP_SCHEDULE_DELAY']);
    expect(read.filter((v) => !documented.has(v))).to.deep.equal([]);
  });

  it('document every variable the development tools read directly', () => {
    const direct = [...readDirectly()];
    expect(direct).to.include('ES_JAVA_HOME');
    expect(direct.filter((v) => !documented.has(v))).to.deep.equal([]);
  });

  it('name no variable nothing reads', () => {
    const read = new Set([...configVariables(), ...readDirectly()]);
    // Read by other programs the service starts or talks to, or by the C library under it, as the rows say.
    const others = new Set(['CHROMIUM_PATH', 'OTEL_EXPORTER_OTLP_HEADERS', 'MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_']);
    expect([...documented].filter((v) => !read.has(v) && !others.has(v))).to.deep.equal([]);
  });
});
