/**
 * The product speaks of itself only: what the repository ships (code, comments, test names,
 * documents, bench pages, the OpenAPI document) names no tracker number and no word of how it
 * was made — who worked on it, where and in which sitting. A reader has no tracker to
 * look a number up in; a comment says why directly or links an ADR (docs/adr/).
 *
 * "Session" and "round" are also product words (a user's login session, a PostgreSQL session,
 * session storage; a round trip, round-robin, a measurement round of the bench), so only their
 * work-log shapes are refused (a number or an ordinal after the word, "round by round").
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** One refused pattern and what it stands for. */
interface Rule {
  name: string;
  pattern: RegExp;
}

const ORDINAL =
  'this|next|previous|prior|earlier|later|past|future|last|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth';

const RULES: Rule[] = [
  { name: 'tracker number', pattern: /\b(?:issue|ticket)s?[\s-]*#?\d+/gi },
  { name: 'tracker number', pattern: /\(#\d+\)/g },
  { name: 'tracker reference', pattern: /\b(?:this|that|the|other|another) issue's\b|\bof this issue\b/gi },
  { name: 'work session', pattern: /\bsessions?[\s-]*\d+/gi },
  { name: 'work session', pattern: new RegExp(`\\b(?:${ORDINAL})\\s+sessions?\\b`, 'gi') },
  { name: 'work session', pattern: /\b(?:by|in) a session\b|\bsession's (?:engin[e]er|merge|work)\b/gi },
  { name: 'maker', pattern: /\bengin[e]er(?:s|'s|s')?\b/gi },
  { name: 'checkout', pattern: /\bwork-?trees?\b/gi },
  { name: 'work round', pattern: /\bround by round\b|\brounds?\s+\d+\b/gi },
  { name: 'work round', pattern: new RegExp(`\\b(?:${ORDINAL})\\s+rounds?\\b`, 'gi') },
];

/** A use of a refused pattern that is legitimate where it stands, and why. */
export interface Allowance {
  /** Repository-relative path the allowance holds in. */
  file: RegExp;
  /** The line's text (the whole line) it holds for. */
  line: RegExp;
  why: string;
}

export const ALLOWED: Allowance[] = [
  { file: /^test\/helpers\/product-voice\.ts$/, line: /./, why: 'the rules themselves, and their examples' },
  {
    file: /^test\/unit\/product-voice\.test\.ts$/,
    line: /\/\/ planted$/,
    why: 'the planted lines that prove the check bites',
  },
];

/**
 * Files not scanned yet, each with the change that lifts the exclusion. Keep this list short and
 * empty it as the files are rewritten.
 */
export const PENDING: { file: string; why: string }[] = [
  {
    file: 'docs/openapi.json',
    why: 'generated from the route declarations, whose descriptions are checked at their source',
  },
];

export interface Finding {
  file: string;
  line: number;
  rule: string;
  text: string;
}

/** Every refused word in `text` (as the file `file`), less the allowed ones. */
export function findProcessWords(text: string, file = '<text>', allowed: Allowance[] = ALLOWED): Finding[] {
  const findings: Finding[] = [];
  text.split('\n').forEach((line, i) => {
    for (const rule of RULES) {
      for (const m of line.matchAll(rule.pattern)) {
        if (allowed.some((a) => a.file.test(file) && a.line.test(line))) continue;
        findings.push({ file, line: i + 1, rule: rule.name, text: m[0] });
      }
    }
  });
  return findings;
}

/** The roots the check covers (files or folders, repository-relative). */
export const ROOTS = [
  'src',
  'test',
  'scripts',
  'bench',
  'docs',
  'index-templates',
  'README.md',
  'CONTRIBUTING.md',
  'CHANGELOG.md',
];

const SKIP = [/^bench\/results\//, /(^|\/)node_modules\//, /^dist\//, /\.(png|jpe?g|gif|ico|woff2?|gz|zip)$/i];

/** The files under `ROOTS` git tracks or would (not ignored), or a walk of the folders outside a checkout. */
export function shippedFiles(root = process.cwd()): string[] {
  let files: string[];
  try {
    files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...ROOTS], {
      cwd: root,
      encoding: 'utf8',
    })
      .split('\0')
      .filter(Boolean);
  } catch {
    const walk = (rel: string): string[] => {
      const abs = path.join(root, rel);
      if (!fs.existsSync(abs)) return [];
      if (!fs.statSync(abs).isDirectory()) return [rel];
      return fs.readdirSync(abs).flatMap((e) => walk(path.posix.join(rel, e)));
    };
    files = ROOTS.flatMap(walk);
  }
  return files.filter((f) => !SKIP.some((s) => s.test(f)) && !PENDING.some((p) => p.file === f));
}

/** Every refused word in the shipped files. */
export function scanRepository(root = process.cwd()): Finding[] {
  return shippedFiles(root).flatMap((f) => {
    const abs = path.join(root, f);
    if (!fs.existsSync(abs)) return []; // deleted in the work tree, not yet in the index
    const text = fs.readFileSync(abs, 'utf8');
    return text.includes('\0') ? [] : findProcessWords(text, f);
  });
}

export const showFindings = (findings: Finding[]): string =>
  findings
    .slice(0, 40)
    .map((f) => `${f.file}:${f.line} ${f.rule}: "${f.text}"`)
    .join('\n');
