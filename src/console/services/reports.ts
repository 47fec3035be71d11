/** The host-info report: agents of the scope grouped by a host column. */
import { API, client, unwrap } from './client';
import { orgIdList, type Scope } from './scope';
import type { Schema } from './types';

export type Buckets = Schema<'AggregationTermBucket'>[];

/** Agents by operating system (POST /report/host-info/aggregation, column os). */
export function agentsByOs(scope: Scope): Promise<Buckets> {
  return unwrap(client.POST(`${API}/report/host-info/aggregation`, { body: { column: 'os', orgIds: orgIdList(scope) } }));
}
