/** The caller's organization tree (beyond the spec): the operator console's scope picker. */
import Joi from 'joi';
import { READERS } from '../../access/principal.js';
import { defineRoute, ok, type RouteSpec } from '../../http/routes.js';
import { isoDateOut } from '../../http/schemas.js';
import type { OrganizationService } from './service.js';

/** More organizations than a scope picker can show; the answer says when it was cut. */
export const ORG_TREE_LIMIT = 10_000;

const treeNode = Joi.object({
  id: Joi.string().required(),
  name: Joi.string().required(),
  parentId: Joi.string(),
  createdAt: isoDateOut,
}).label('OrganizationTreeNode').meta({ className: 'OrganizationTreeNode' });

const tree = Joi.object({
  organizations: Joi.array().items(treeNode).required().description("the caller's subtree (every organization for a system token)"),
  truncated: Joi.boolean().required().description(`true when there were more than ${ORG_TREE_LIMIT} organizations`),
}).label('OrganizationTree').meta({ className: 'OrganizationTree' });

export function organizationTreeRoutes(orgs: OrganizationService): RouteSpec[] {
  return [
    defineRoute({
      operationId: 'getOrganizationTree',
      method: 'GET',
      path: '/org/tree',
      summary: "The organizations of the caller's subtree, with names and parents",
      tag: 'admin',
      lane: 'interactive',
      sec: true,
      roles: READERS,
      extension: true,
      responses: { 200: { description: 'OK', schema: tree } },
      errors: [401, 403],
      handler: async ({ access }) => ok(await orgs.visibleTree(access, ORG_TREE_LIMIT)),
    }),
  ];
}
