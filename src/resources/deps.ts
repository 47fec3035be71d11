/** What every resource is built from: the configuration, the store and the logger. */
import type { Config } from '../config.js';
import type { StoreContext } from '../store/client.js';
import type { Logger } from '../log.js';

export interface BaseDeps {
  config: Config;
  store: StoreContext;
  log: Logger;
}
