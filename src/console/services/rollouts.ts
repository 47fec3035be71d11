/** Agent-version rollouts (POST /rollouts/page-search, GET /rollouts/{id}, the moves; extensions). */
import { API, client, unwrap } from './client';
import type { Schema } from './types';

export type Rollout = Schema<'Rollout'>;
export type RolloutRing = Schema<'RolloutRing'>;
export type RolloutPage = Schema<'PageRollout'>;
export type RolloutMove = 'pause' | 'resume' | 'abort' | 'rollback';

/** The rollouts of an organization and those below it, newest first. */
export function searchRollouts(orgId: string | undefined, page = 0, size = 20): Promise<RolloutPage> {
  return unwrap(client.POST(`${API}/rollouts/page-search`, { body: { criteria: orgId ? { orgId } : {}, pageRequest: { page, size } } }));
}

export function getRollout(id: string): Promise<Rollout> {
  return unwrap(client.GET(`${API}/rollouts/{id}`, { params: { path: { id } } }));
}

/** One operator move; answers the rollout after it. */
export function moveRollout(id: string, move: RolloutMove): Promise<Rollout> {
  const opts = { params: { path: { id } } };
  switch (move) {
    case 'pause':
      return unwrap(client.POST(`${API}/rollouts/{id}/pause`, opts));
    case 'resume':
      return unwrap(client.POST(`${API}/rollouts/{id}/resume`, opts));
    case 'abort':
      return unwrap(client.POST(`${API}/rollouts/{id}/abort`, opts));
    default:
      return unwrap(client.POST(`${API}/rollouts/{id}/rollback`, opts));
  }
}

/** The moves a rollout in `state` accepts (the service's state machine). */
export function movesFor(state: Rollout['state']): RolloutMove[] {
  switch (state) {
    case 'RUNNING':
      return ['pause', 'abort', 'rollback'];
    case 'PAUSED':
    case 'HALTED':
      return ['resume', 'abort', 'rollback'];
    case 'COMPLETED':
    case 'ABORTED':
      return ['rollback'];
    default:
      return [];
  }
}
