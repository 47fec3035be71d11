/** The scope picker: the caller's organization tree as an indented list, and "include children". */
import type { OrganizationNode } from '../services/organizations';

export interface TreeEntry {
  org: OrganizationNode;
  depth: number;
}

/** Depth-first order with depths; roots are the organizations whose parent is not in the list. */
export function treeOrder(orgs: OrganizationNode[]): TreeEntry[] {
  const ids = new Set(orgs.map((o) => o.id));
  const children = new Map<string, OrganizationNode[]>();
  const roots: OrganizationNode[] = [];
  for (const o of orgs) {
    if (o.parentId && ids.has(o.parentId)) children.set(o.parentId, [...(children.get(o.parentId) ?? []), o]);
    else roots.push(o);
  }
  const out: TreeEntry[] = [];
  const walk = (o: OrganizationNode, depth: number) => {
    out.push({ org: o, depth });
    for (const c of (children.get(o.id) ?? []).sort((a, b) => a.name.localeCompare(b.name))) walk(c, depth + 1);
  };
  for (const r of roots.sort((a, b) => a.name.localeCompare(b.name))) walk(r, 0);
  return out;
}

export function OrgPicker(props: { entries: TreeEntry[]; orgId: string; includeChildren: boolean; onChange(orgId: string, includeChildren: boolean): void }) {
  return (
    <div class="org-picker">
      <label for="scope-org">Organization</label>
      <select id="scope-org" value={props.orgId} onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value, props.includeChildren)}>
        {props.entries.map((e) => (
          <option key={e.org.id} value={e.org.id}>
            {`${'\u00a0\u00a0'.repeat(e.depth)}${e.depth ? '└ ' : ''}${e.org.name} (${e.org.id})`}
          </option>
        ))}
      </select>
      <label class="check">
        <input
          id="scope-children"
          type="checkbox"
          checked={props.includeChildren}
          onChange={(e) => props.onChange(props.orgId, (e.currentTarget as HTMLInputElement).checked)}
        />
        include children
      </label>
    </div>
  );
}
