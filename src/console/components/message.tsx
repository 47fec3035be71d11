/** A status line: errors are announced (role=alert), notices politely (role=status). */
export function Message(props: { kind: 'error' | 'notice'; text: string | undefined; testId?: string }) {
  if (!props.text) return null;
  return (
    <p class={`message ${props.kind}`} role={props.kind === 'error' ? 'alert' : 'status'} data-testid={props.testId}>
      {props.text}
    </p>
  );
}
