/** Rollouts of an agent version in rings (extensions): create, read, page search, and the operator's moves. */
import { READERS, WRITERS } from '../../access/principal.js';
import { routeDefaults, ok, type RouteSpec } from '../../http/routes.js';
import type { PageRequest } from '../../domain.js';
import type { NewRollout, RolloutState } from './model.js';
import type { RolloutMove, RolloutService } from './service.js';
import { newRollout, pagedRolloutCriteria, pageRollout, rolloutIdParams, rolloutRecord } from './schema.js';

/** What this file's route declarations share unless one says otherwise. */
const route = routeDefaults({ tag: 'rollout', sec: true, roles: READERS, errors: [400, 401, 403, 500] });

const MOVE_SUMMARIES: Record<RolloutMove, string> = {
  pause: 'Pause a RUNNING rollout: no further upgrade command is sent, on any instance, within a second; resume continues it',
  resume: 'Resume a PAUSED rollout, or a HALTED one: the ring that failed its gate is judged again from now',
  abort: 'Abort a RUNNING, PAUSED or HALTED rollout: nothing more is sent; endpoints keep the version they run and organizations their pins',
  rollback:
    'Roll a rollout back: the previous version is sent to every endpoint it sent the upgrade, and the organizations it pinned get their previous pins back (ROLLING_BACK, then ROLLED_BACK)',
};

export function rolloutRoutes(svc: RolloutService): RouteSpec[] {
  const move = (m: RolloutMove): RouteSpec =>
    route<{ id: string }>({
      operationId: `${m}Rollout`,
      method: 'POST',
      path: `/rollouts/{id}/${m}`,
      summary: MOVE_SUMMARIES[m],
      lane: 'admin',
      roles: WRITERS,
      extension: true,
      params: rolloutIdParams,
      responses: { 200: { description: 'The rollout after the move', schema: rolloutRecord } },
      errors: [400, 401, 403, 404, 409, 500],
      handler: async ({ params, access }) => ok(await svc.move(params.id, m, access)),
    });
  return [
    route<Record<string, never>, Record<string, never>, NewRollout>({
      operationId: 'createRollout',
      method: 'POST',
      path: '/rollouts',
      summary:
        "Start rolling an agent version out to an organization's agents in rings: each ring is sent the upgrade command (in its customers' maintenance windows), soaks, and must reach the gate's healthy share before the next starts; a ring that does not halts the rollout (and rolls it back with autoRollback)",
      lane: 'admin',
      roles: WRITERS,
      extension: true,
      idempotent: true,
      body: newRollout,
      responses: { 201: { description: 'Created: the rollout, RUNNING', schema: rolloutRecord } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ body, access, createdId }) => ({ status: 201, body: await svc.create(body, access, createdId) }),
    }),
    route<{ id: string }>({
      operationId: 'getRollout',
      method: 'GET',
      path: '/rollouts/{id}',
      summary: 'One rollout with its state, the halt reason, and per ring its state and counts (upgraded, healthy, failed, pending)',
      lane: 'interactive',
      extension: true,
      params: rolloutIdParams,
      responses: { 200: { description: 'OK', schema: rolloutRecord } },
      errors: [400, 401, 403, 404, 500],
      handler: async ({ params, access }) => ok(await svc.get(params.id, access)),
    }),
    route<Record<string, never>, Record<string, never>, { criteria: { orgId?: string; state?: RolloutState }; pageRequest: PageRequest }>({
      operationId: 'searchRollouts',
      method: 'POST',
      path: '/rollouts/page-search',
      summary: "Rollouts within the caller's subtree (of an organization and those below it, of a state), newest first unless sorted",
      lane: 'heavy',
      extension: true,
      body: pagedRolloutCriteria,
      responses: { 200: { description: 'OK', schema: pageRollout } },
      handler: async ({ body, access }) => ok(await svc.search(body.criteria, body.pageRequest, access)),
    }),
    move('pause'),
    move('resume'),
    move('abort'),
    move('rollback'),
  ];
}
