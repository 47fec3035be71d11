/** Catalogues versioned in the repository's data/ folder (bundles, commands): where they are and how they are read. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Joi from 'joi';

/** The path of a file in data/ (the same from src/ and from dist/). */
export function dataFile(name: string): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'data', name);
}

/** Validates a parsed catalogue against its schema; throws `<what>: <problems>`. */
export function validateCatalogue<T>(raw: unknown, schema: Joi.Schema, what: string, opts: Joi.ValidationOptions = {}): T {
  const { value, error } = schema.validate(raw, { abortEarly: false, ...opts });
  if (error) throw new Error(`${what}: ${error.message}`);
  return value as T;
}

/** Reads a JSON file. */
export function readJsonFile(file: string): unknown {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}
