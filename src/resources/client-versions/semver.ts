/** Canonical agent versions: v-prefixed semantic versions (spec 4.1 rule 3, section 9). */
import semver from 'semver';

/** `1.2.3` or `v1.2.3` → `v1.2.3`; undefined when not a semantic version. */
export function canonicalVersion(input: string): string | undefined {
  const trimmed = input.trim();
  if (!/^v?\d/.test(trimmed)) return undefined;
  const v = semver.valid(trimmed.startsWith('v') ? trimmed.slice(1) : trimmed);
  return v ? `v${v}` : undefined;
}

/** The highest version of a list (ignores entries that are not semantic versions). */
export function latestVersion(versions: readonly string[]): string | undefined {
  const valid = versions.map(canonicalVersion).filter((v): v is string => v !== undefined);
  if (valid.length === 0) return undefined;
  return valid.sort((a, b) => semver.rcompare(a.slice(1), b.slice(1)))[0];
}
