/**
 * Bundles the operator console (src/console) with esbuild into dist/console: hashed assets
 * under assets/ (served immutable) and an index.html naming them (served no-cache).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Builds the console into `outDir` (default dist/console); returns the asset names. */
export async function buildConsole(outDir = path.join(root, 'dist/console')): Promise<{ js: string; css: string }> {
  const assets = path.join(outDir, 'assets');
  fs.rmSync(outDir, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: [path.join(root, 'src/console/main.tsx')],
    bundle: true,
    minify: true,
    sourcemap: true,
    format: 'esm',
    target: ['chrome120', 'firefox120', 'safari17'],
    outdir: assets,
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    metafile: true,
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const outputs = Object.keys(result.metafile.outputs).map((o) => path.basename(o));
  const js = outputs.find((o) => o.endsWith('.js'));
  const css = outputs.find((o) => o.endsWith('.css'));
  if (!js || !css) throw new Error(`console build produced ${outputs.join(', ')}`);
  const html = fs.readFileSync(path.join(root, 'src/console/index.html'), 'utf8').replace('%JS%', js).replace('%CSS%', css);
  fs.writeFileSync(path.join(outDir, 'index.html'), html);
  return { js, css };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const { js, css } = await buildConsole();
  console.log(`console built: dist/console/assets/${js}, ${css}`);
}
