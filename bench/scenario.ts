/** What a request scenario is: one HTTP operation of the service and its direct equivalent (bench/scenarios.ts). */
import type autocannon from 'autocannon';
import type { Client } from '@elastic/elasticsearch';
import type { Seeded } from './seed.js';

export const API = '/endpoint-control-service/v1';

export interface Scenario {
  name: string;
  /** What the service does for one request (store round trips included). */
  serviceWork: string;
  /** What the direct equivalent issues. */
  directWork: string;
  /** autocannon request for the service; `next()` numbers the requests of a round. */
  service: (next: () => number) => autocannon.Request;
  /**
   * The same store work issued directly; `i` numbers the requests of a round. `body` is the
   * service's request body as the bare hop received and parsed it (absent in the direct rounds).
   */
  direct: (i: number, body?: unknown) => Promise<unknown>;
  /** Whose token the service's requests carry: the bench's system token unless `distributor` (an admin of the distributor). */
  caller?: 'distributor';
  /** Work beside the scenario while it is measured (the service's, the hop's and the direct rounds); answers its stop, which counts what it did. */
  background?: () => () => Promise<number>;
  /** Brings the store to the state the scenario's requests assume, before its warm-up; not measured. */
  prepare?: () => Promise<void>;
}

export interface ScenarioContext {
  client: Client;
  prefix: string;
  seeded: Seeded;
  /** The first root organization and its subtree (every org below it). */
  root: string;
  subtree: string[];
  /** The distributor: the root holding most organizations and endpoints. */
  distributor: string;
}
