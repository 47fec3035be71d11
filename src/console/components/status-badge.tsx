/** A status shown as text with a class per kind: stale presence and expired commands stand out. */
const WARN = new Set(['POTENTIALLY_DISCONNECTED', 'EXPIRED', 'MSG_SEND_FAIL', 'FAILED', 'REFUSED', 'CANCELLED']);
const TITLES: Record<string, string> = {
  POTENTIALLY_DISCONNECTED: 'Connected, but not seen within the presence timeout',
  EXPIRED: 'Not delivered before it expired; it will not be sent',
};

export function StatusBadge(props: { status: string | undefined }) {
  const s = props.status ?? '';
  if (!s) return null;
  return (
    <span class={WARN.has(s) ? 'badge badge-warn' : 'badge'} data-status={s} title={TITLES[s]}>
      {s === 'POTENTIALLY_DISCONNECTED' ? '⚠ ' : ''}
      {s}
    </span>
  );
}
