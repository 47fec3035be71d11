/**
 * A linearizability check for small concurrent histories (Wing and Gong's search): is there one
 * sequential order of the operations, consistent with real time (an operation answered before
 * another was sent comes first), in which a sequential model of the spec gives every answer the
 * callers saw and ends in the state read back? An operation whose outcome is unknown (its answer
 * was lost: 503) may have taken effect at any point before its caller learnt of the loss, or
 * never; whatever it answered is not checked.
 */

/** One operation of a history, as a caller saw it. */
export interface Op<I, A> {
  /** Who sent it (for messages). */
  caller: number;
  input: I;
  /** Logical clock ticks: when it was sent and when its (last) answer arrived. */
  invokedAt: number;
  answeredAt: number;
  /** The answer, or undefined when the caller never learnt the outcome (the model allows either). */
  answer?: A;
}

/**
 * A sequential model of one operation kind: applies `input` to `state` and answers the state after,
 * or undefined when the model does not allow `answer` there. `answer` is undefined for an
 * operation whose outcome is unknown and that is taken to have happened here (the model then
 * stands in for what it would have answered, e.g. a version nobody saw).
 */
export interface Model<S, I, A> {
  step(state: S, input: I, answer: A | undefined): S | undefined;
}

export interface Linearization<S> {
  /** Indexes into the history, in the order the model applied them (unknown ops left out were skipped). */
  order: number[];
  state: S;
}

/**
 * The first linearization of `history` under `model` from `initial` whose end state satisfies
 * `finalOk`, or undefined when none exists.
 */
export function linearize<S, I, A>(
  model: Model<S, I, A>,
  initial: S,
  history: readonly Op<I, A>[],
  finalOk: (s: S) => boolean,
): Linearization<S> | undefined {
  const n = history.length;
  if (n > 30) throw new Error(`a history of ${n} operations is too long to search`);
  const seen = new Set<string>();
  const order: number[] = [];
  const visit = (done: number, state: S): S | undefined => {
    if (done === (1 << n) - 1) return finalOk(state) ? state : undefined;
    const key = `${done}|${JSON.stringify(state)}`;
    if (seen.has(key)) return undefined;
    seen.add(key);
    // Candidates: pending operations that no other pending operation precedes in real time.
    let earliestAnswer = Infinity;
    for (let i = 0; i < n; i++) if (!(done & (1 << i)) && history[i].answer !== undefined) earliestAnswer = Math.min(earliestAnswer, history[i].answeredAt);
    for (let i = 0; i < n; i++) {
      if (done & (1 << i)) continue;
      const op = history[i];
      if (op.invokedAt > earliestAnswer) continue;
      const next = model.step(state, op.input, op.answer);
      if (next !== undefined) {
        order.push(i);
        const end = visit(done | (1 << i), next);
        if (end !== undefined) return end;
        order.pop();
      }
      if (op.answer === undefined) {
        // It never took effect.
        const end = visit(done | (1 << i), state);
        if (end !== undefined) return end;
      }
    }
    return undefined;
  };
  const state = visit(0, initial);
  return state === undefined ? undefined : { order: [...order], state };
}

/** A readable history for a failure message. */
export function describeHistory<I, A>(history: readonly Op<I, A>[], show: (a: A) => string): string {
  return [...history]
    .map((op, i) => ({ op, i }))
    .sort((x, y) => x.op.invokedAt - y.op.invokedAt)
    .map(({ op, i }) => `  #${i} caller ${op.caller} [${op.invokedAt}→${op.answeredAt}] ${JSON.stringify(op.input)} ⇒ ${op.answer === undefined ? 'unknown (answer lost)' : show(op.answer)}`)
    .join('\n');
}
