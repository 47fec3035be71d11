/**
 * The bundle catalogue (spec 4.6; Bundle's fields are designed here as
 * `{id, name, description, modules}`). The catalogue is a versioned JSON file in the repo
 * (data/bundles.json) loaded into Elasticsearch at start-up; the admin operation adds or
 * replaces one bundle. A file with a higher `version` replaces the stored definitions of
 * the bundles it names, whoever wrote them last; an equal or lower one leaves them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Joi from 'joi';
import type { Access } from '../../http/auth.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { id as idSchema } from '../../http/schemas.js';
import type { Logger } from '../../log.js';
import { MODULE_NAMES, type Bundle, type ModuleName } from '../modules/model.js';
import type { BundleDoc, BundleStore } from './store.js';

export interface BundleCatalogue {
  version: number;
  bundles: Bundle[];
}

export const defaultCatalogueFile = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'data',
  'bundles.json',
);

/** A bundle definition: the shape the catalogue file and the admin operation share. */
export const bundleFields = {
  id: idSchema.required(),
  name: Joi.string().trim().min(1).max(256).required(),
  description: Joi.string().trim().allow('').max(4096).default(''),
  modules: Joi.array()
    .items(Joi.string().valid(...MODULE_NAMES))
    .min(1)
    // unique() already bounds it; max() says so in the document.
    .max(MODULE_NAMES.length)
    .unique()
    .required(),
};

const catalogueSchema = Joi.object({
  version: Joi.number().integer().min(1).required(),
  bundles: Joi.array().items(Joi.object(bundleFields)).unique('id').required(),
});

/** Reads and validates a catalogue file; throws naming the file and the problem. */
export function loadCatalogueFile(file: string = defaultCatalogueFile): BundleCatalogue {
  const raw: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  const { value, error } = catalogueSchema.validate(raw, { abortEarly: false });
  if (error) throw new Error(`bundle catalogue ${file}: ${error.message}`);
  return value as BundleCatalogue;
}

export function toBundle(d: Pick<BundleDoc, 'id' | 'name' | 'description' | 'modules'>): Bundle {
  return { id: d.id, name: d.name, description: d.description, modules: [...d.modules] };
}

export class BundleService {
  constructor(
    private readonly store: BundleStore,
    private readonly catalogue: BundleCatalogue,
  ) {}

  /**
   * Loads the catalogue file into the index: bundles that are absent or stored from an older
   * catalogue version are written; others are left as they are (an admin replacement
   * survives restarts until the file's version is raised). Idempotent; safe on several
   * instances at once.
   */
  async loadCatalogue(log?: Logger): Promise<void> {
    const { version, bundles } = this.catalogue;
    const stored = new Map((await this.store.getMany(bundles.map((b) => b.id))).map((h) => [h.id, h]));
    const now = new Date().toISOString();
    const writes = bundles
      .filter((b) => (stored.get(b.id)?.doc.catalogueVersion ?? 0) < version)
      .map((b) => ({
        doc: { ...toBundle(b), source: 'catalogue' as const, catalogueVersion: version, updatedAt: now, updatedBy: 'catalogue' },
        current: stored.get(b.id),
      }));
    const written = await this.store.writeCatalogue(writes);
    log?.info({ catalogueVersion: version, written: written.length, bundles: bundles.length }, 'bundle catalogue loaded');
  }

  /** Every bundle, by id. */
  async list(): Promise<Bundle[]> {
    return (await this.store.list()).map(toBundle);
  }

  /** One bundle; 404 when unknown. */
  async get(id: string): Promise<Bundle> {
    const hit = await this.store.get(id);
    if (!hit) throw new NotFoundError(`bundle ${id} not found`);
    return toBundle(hit.doc);
  }

  /** The bundles among `ids` that exist (unknown ids are skipped). */
  async getMany(ids: string[]): Promise<Bundle[]> {
    return (await this.store.getMany(ids)).map((h) => toBundle(h.doc));
  }

  /** Adds or replaces one bundle (admin). */
  async put(id: string, input: Omit<Bundle, 'id'> & { id?: string }, access: Access): Promise<Bundle> {
    if (input.id !== undefined && input.id !== id) {
      throw new ValidationError(`body.id: "${input.id}" does not match the bundle id ${id} of the path`);
    }
    const doc: BundleDoc = {
      id,
      name: input.name,
      description: input.description,
      modules: [...input.modules] as ModuleName[],
      source: 'admin',
      catalogueVersion: this.catalogue.version,
      updatedAt: new Date().toISOString(),
      updatedBy: access.userKey.username,
    };
    return toBundle(await this.store.put(doc));
  }
}
