/**
 * The agent channel's long poll (docs/adr/0113-agent-channel.md): one held request, answered
 * with the messages claimed for it, with [] when its wait ends, or with 503 and a spread
 * Retry-After when the instance stops.
 */
import { ServiceUnavailableError } from '../../errors.js';
import type { Access } from '../../access/access.js';
import type { EndpointCommandMessage } from '../../resources/commands/model.js';
import type { HeldChannel } from '../../resources/agent-channel/model.js';
import { CHECKIN_RETRY_AFTER_SECONDS } from '../../lanes.js';

/** A Retry-After spread over the check-in range, so that agents sent away do not all come back at once. */
export function spreadRetryAfter(): number {
  const { min, max } = CHECKIN_RETRY_AFTER_SECONDS;
  return min + Math.floor(Math.random() * (max - min + 1));
}

export class LongPollChannel implements HeldChannel {
  readonly kind = 'LONG_POLL' as const;
  private result: EndpointCommandMessage[] | Error | undefined;
  private settle: ((r: EndpointCommandMessage[] | Error) => void) | undefined;
  /** The client went away before its answer. */
  private gone = false;

  constructor(
    readonly endpointId: string,
    readonly access: Access,
    readonly since: number = Date.now(),
  ) {}

  get answered(): boolean {
    return this.result !== undefined;
  }

  writable(): boolean {
    return !this.gone && this.result === undefined;
  }

  deliver(messages: EndpointCommandMessage[]): Promise<EndpointCommandMessage[]> {
    if (!this.writable()) return Promise.resolve(messages);
    this.finish(messages);
    return Promise.resolve([]);
  }

  end(why: 'expired' | 'shutdown'): void {
    if (this.result !== undefined) return;
    this.finish(why === 'expired' ? [] : new ServiceUnavailableError('the instance is stopping; take up the agent channel again', spreadRetryAfter()));
  }

  /** The client closed its connection before the answer. */
  abandon(): void {
    this.gone = true;
  }

  /**
   * The answer: at once when given, else once it is. A plain promise, not an async function: a
   * held poll waits with no suspended frame of its own.
   */
  answer(): Promise<EndpointCommandMessage[]> {
    const r = this.result;
    if (r !== undefined) return r instanceof Error ? Promise.reject(r) : Promise.resolve(r);
    return new Promise<EndpointCommandMessage[]>((resolve, reject) => (this.settle = (v) => (v instanceof Error ? reject(v) : resolve(v))));
  }

  private finish(r: EndpointCommandMessage[] | Error): void {
    this.result = r;
    this.settle?.(r);
    this.settle = undefined;
  }
}
