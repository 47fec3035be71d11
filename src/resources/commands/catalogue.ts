/**
 * The command catalogue (data/commands.json, versioned in the repository): which command
 * names an endpoint's `cmd` module accepts, per operating system.
 */
import Joi from 'joi';
import type { Host } from '../endpoints/model.js';
import { dataFile, readJsonFile, validateCatalogue } from '../data-files.js';

export const CATALOGUE_OS = ['linux', 'mac', 'windows'] as const;
export type CatalogueOs = (typeof CATALOGUE_OS)[number];

export interface CatalogueEntry {
  name: string;
  os: CatalogueOs[];
  description: string;
}

export interface CommandCatalogue {
  version: number;
  commands: CatalogueEntry[];
}

export const COMMAND_NAME_PATTERN = /^[a-z][a-z0-9-]{0,63}$/;

const catalogueSchema = Joi.object({
  _comment: Joi.string(),
  version: Joi.number().integer().min(1).required(),
  commands: Joi.array()
    .items(
      Joi.object({
        name: Joi.string().pattern(COMMAND_NAME_PATTERN).required(),
        os: Joi.array()
          .items(Joi.string().valid(...CATALOGUE_OS))
          .min(1)
          .unique()
          .required(),
        description: Joi.string().allow('').default(''),
      }),
    )
    .unique('name')
    .required(),
});

export const defaultCatalogueFile = dataFile('commands.json');

/** Parses and validates a catalogue; throws naming the offending entry. */
export function parseCatalogue(raw: unknown): CommandCatalogue {
  const { version, commands } = validateCatalogue<CommandCatalogue>(raw, catalogueSchema, 'command catalogue', { stripUnknown: true });
  return { version, commands };
}

/** Reads the catalogue file (default: data/commands.json). */
export function loadCatalogue(file = defaultCatalogueFile): CommandCatalogue {
  return parseCatalogue(readJsonFile(file));
}

/**
 * The catalogue OS of an endpoint from its hostInfo: `os` first (gopsutil reports linux,
 * darwin, windows), then `platformFamily` and `platform`; undefined when none is recognised.
 */
export function catalogueOsOf(host: Host | undefined): CatalogueOs | undefined {
  for (const raw of [host?.os, host?.platformFamily, host?.platform]) {
    const v = raw?.trim().toLowerCase();
    if (!v) continue;
    if (v.startsWith('win') || v.includes('windows')) return 'windows';
    if (v === 'darwin' || v === 'mac' || v === 'macos' || v === 'osx' || v.startsWith('mac os')) return 'mac';
    if (v === 'linux' || ['debian', 'ubuntu', 'rhel', 'redhat', 'centos', 'fedora', 'suse', 'alpine', 'arch', 'amazon'].includes(v)) {
      return 'linux';
    }
  }
  return undefined;
}

/** The command names accepted on `os`, in catalogue order (none for an unknown OS). */
export function commandsFor(catalogue: CommandCatalogue, os: CatalogueOs | undefined): string[] {
  if (!os) return [];
  return catalogue.commands.filter((c) => c.os.includes(os)).map((c) => c.name);
}
