/**
 * Agent-version rollouts of the scope: each with its state, the halt reason, its gate, and its
 * rings as bars (upgraded, healthy, failed, pending of each ring's endpoints), polled while any
 * is moving. Pause, resume, abort and rollback ask for confirmation first, and are offered only
 * where the person's grants allow writes (the service decides for a token's page).
 */
import { useEffect, useState } from 'preact/hooks';
import { Message } from '../components/message';
import { StatusBadge } from '../components/status-badge';
import { describeError } from '../services/client';
import { moveRollout, movesFor, searchRollouts, type Rollout, type RolloutMove, type RolloutPage, type RolloutRing } from '../services/rollouts';
import type { Scope } from '../services/scope';
import { itemsOf, totalOf } from '../services/types';

const POLL_MS = 1000;
const MOVE_TEXT: Record<RolloutMove, string> = {
  pause: 'Pause: no further upgrade command is sent until it is resumed.',
  resume: 'Resume: sending and judging go on (a halted ring is judged again from now).',
  abort: 'Abort: nothing more is sent; endpoints keep the version they run.',
  rollback: 'Roll back: the previous version is sent to every endpoint this rollout upgraded, and the previous pins are restored.',
};
const SEGMENTS = ['healthy', 'upgraded', 'failed', 'pending'] as const;

/** One ring as a stacked bar: healthy, upgraded but not healthy, failed, pending. */
function RingBar(props: { ring: RolloutRing; index: number }) {
  const { total, upgraded, healthy, failed, pending } = props.ring.counts;
  const parts: Record<(typeof SEGMENTS)[number], number> = { healthy, upgraded: upgraded - healthy, failed, pending };
  const what = props.ring.orgIds ? `organizations ${props.ring.orgIds.join(', ')}` : `${props.ring.percent ?? 100} %`;
  return (
    <li class="ring" data-ring={String(props.index + 1)} data-ring-state={props.ring.state}>
      <span>
        Ring {props.index + 1} ({what}): <StatusBadge status={props.ring.state} />
      </span>
      <div
        class="ring-bar"
        role="img"
        aria-label={`Ring ${props.index + 1}: ${upgraded} upgraded, ${healthy} healthy, ${failed} failed, ${pending} pending of ${total}`}
      >
        {SEGMENTS.map((s) =>
          parts[s] > 0 ? <span key={s} class={`seg seg-${s}`} data-seg={s} style={{ width: `${(100 * parts[s]) / Math.max(1, total)}%` }} /> : null,
        )}
      </div>
      <span class="note" data-ring-counts={`${upgraded}/${healthy}/${failed}/${pending}/${total}`}>
        {upgraded} upgraded, {healthy} healthy, {failed} failed, {pending} pending of {total}
      </span>
    </li>
  );
}

function RolloutCard(props: { rollout: Rollout; canWrite: boolean; onChanged(): void }) {
  const r = props.rollout;
  const [confirming, setConfirming] = useState<RolloutMove | undefined>();
  const [error, setError] = useState<string | undefined>();
  return (
    <article class="panel" data-rollout={r.id} data-rollout-state={r.state}>
      <h3>
        {r.name} <StatusBadge status={r.state} />
      </h3>
      <p class="note">
        {r.orgId}: {Object.entries(r.targetVersion).map(([os, v]) => `${os} ${String(v)}`).join(', ')}; gate {r.gate.minHealthyPercent} % healthy within{' '}
        {r.gate.withinSeconds} s, soak {r.soakSeconds} s{r.autoRollback ? ', rolls back by itself' : ''}
      </p>
      {r.reason && (
        <p data-rollout-reason>
          <strong>{r.state === 'HALTED' || r.state === 'ROLLING_BACK' || r.state === 'ROLLED_BACK' ? 'Halt reason' : 'Last change'}:</strong> {r.reason}
        </p>
      )}
      <ol class="rings">
        {r.rings.map((ring, i) => (
          <RingBar key={i} ring={ring} index={i} />
        ))}
      </ol>
      <Message kind="error" text={error} />
      {props.canWrite && !confirming && (
        <div class="table-actions">
          {movesFor(r.state).map((m) => (
            <button key={m} type="button" data-rollout-move={m} onClick={() => setConfirming(m)}>
              {m === 'rollback' ? 'Roll back' : m[0].toUpperCase() + m.slice(1)}…
            </button>
          ))}
        </div>
      )}
      {confirming && (
        <div class="confirm" role="alertdialog" aria-labelledby={`confirm-${r.id}`} data-rollout-confirm={confirming}>
          <p id={`confirm-${r.id}`}>{MOVE_TEXT[confirming]}</p>
          <button
            type="button"
            data-rollout-confirm-yes
            onClick={() => {
              setError(undefined);
              moveRollout(r.id, confirming).then(
                () => (setConfirming(undefined), props.onChanged()),
                (e: unknown) => (setError(describeError(e)), setConfirming(undefined), props.onChanged()),
              );
            }}
          >
            Confirm
          </button>
          <button type="button" data-rollout-confirm-no onClick={() => setConfirming(undefined)}>
            Cancel
          </button>
        </div>
      )}
    </article>
  );
}

export function RolloutsPage(props: { scope: Scope; canWriteIn: (orgId: string) => boolean }) {
  const [page, setPage] = useState<RolloutPage | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [tick, setTick] = useState(0);
  const reload = () => setTick((t) => t + 1);
  useEffect(() => {
    let live = true;
    searchRollouts(props.scope.coversAll ? undefined : props.scope.orgId).then(
      (p) => live && (setPage(p), setError(undefined)),
      (e: unknown) => live && setError(describeError(e)),
    );
    return () => {
      live = false;
    };
  }, [tick, props.scope.orgId, props.scope.coversAll]);
  const moving = page ? itemsOf(page).some((r) => r.state === 'RUNNING' || r.state === 'ROLLING_BACK') : false;
  useEffect(() => {
    if (!moving) return;
    const timer = setTimeout(reload, POLL_MS);
    return () => clearTimeout(timer);
  }, [moving, page]);
  return (
    <section id="rollouts" aria-labelledby="rollouts-title">
      <h2 id="rollouts-title" tabIndex={-1}>
        Rollouts
      </h2>
      <p class="note">
        Agent versions rolled out in rings <span data-total={page ? String(totalOf(page)) : ''}>{page ? `(${totalOf(page)} in total)` : ''}</span>
      </p>
      <Message kind="error" text={error} />
      {page && itemsOf(page).length === 0 && <Message kind="notice" text="No rollout in this scope." />}
      {page && itemsOf(page).map((r) => <RolloutCard key={r.id} rollout={r} canWrite={props.canWriteIn(r.orgId)} onChanged={reload} />)}
    </section>
  );
}
