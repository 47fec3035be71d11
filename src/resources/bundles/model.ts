/** Bundle (spec 4.6; its fields are not shown in the spec, designed here): a named set of modules. */
import type { ModuleName } from '../module-names.js';

export interface Bundle {
  id: string;
  name: string;
  description: string;
  modules: ModuleName[];
}
