/**
 * The bundle catalogue (spec 4.6; Bundle's fields are designed here as
 * `{id, name, description, modules}`). The catalogue is a versioned JSON file in the repo
 * (data/bundles.json) loaded into Elasticsearch at start-up; the admin operation adds or
 * replaces one bundle. A file with a higher `version` replaces the stored definitions of
 * the bundles it names, whoever wrote them last; an equal or lower one leaves them.
 */
import Joi from 'joi';
import type { Access } from '../../access/access.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { ModuleName } from '../module-names.js';
import type { Bundle } from './model.js';
import { bundleFields } from './schema.js';
import type { BundleDoc, BundleStore } from './store.js';
import { dataFile, readJsonFile, validateCatalogue } from '../data-files.js';

export interface BundleCatalogue {
  version: number;
  bundles: Bundle[];
}

export const defaultCatalogueFile = dataFile('bundles.json');

const catalogueSchema = Joi.object({
  version: Joi.number().integer().min(1).required(),
  bundles: Joi.array().items(Joi.object(bundleFields)).unique('id').required(),
});

/** Reads and validates a catalogue file; throws naming the file and the problem. */
export function loadCatalogueFile(file: string = defaultCatalogueFile): BundleCatalogue {
  return validateCatalogue<BundleCatalogue>(readJsonFile(file), catalogueSchema, `bundle catalogue ${file}`);
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
