/** A titled section of a detail page. */
import type { ComponentChildren } from 'preact';

export function Panel(props: { id: string; title: string; children: ComponentChildren }) {
  return (
    <section class="panel" id={props.id} aria-labelledby={`${props.id}-title`}>
      <h3 id={`${props.id}-title`}>{props.title}</h3>
      {props.children}
    </section>
  );
}
