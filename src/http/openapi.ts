/** The OpenAPI 3.1 document, generated from the route declarations and their joi schemas. */
import { STATUS_CODES } from 'node:http';
import { API_PREFIX, paramKey, type RouteSpec } from './routes.js';
import { TOKEN_HEADER } from './auth.js';
import { Components, correctSchema, toSchema, type JsonSchema } from './openapi-schemas.js';

const errorBodySchema: JsonSchema = {
  type: 'object',
  required: ['message', 'status', 'error', 'timestamp', 'exception', 'path'],
  properties: {
    message: { type: 'string' },
    status: { type: 'integer' },
    error: { type: 'string' },
    timestamp: { type: 'integer', format: 'int64' },
    exception: { type: 'string' },
    path: { type: 'string' },
    requestId: {
      type: 'string',
      description: 'Extension: the request id, also answered in the x-request-id header (the one in the log lines)',
    },
    traceId: {
      type: 'string',
      description: "Extension: the W3C trace id of the request's trace, while the service sends OpenTelemetry traces",
      pattern: '^[0-9a-f]{32}$',
    },
  },
};

const ERROR_REF = { $ref: '#/components/schemas/ErrorBody' };

/**
 * Answers any operation can give besides the ones the spec lists for it: an unknown query
 * parameter or malformed input is refused (400, docs/adr/0060-unknown-fields-refused.md), a token that is
 * present is always verified (401), the store can be down or a request time out (503 with
 * Retry-After), a body can exceed the limit (413), a token can exceed its rate (429), and an
 * operation's admission lane can be full (src/http/admission.ts: 429 for the caller's excess,
 * 503 for the service's).
 */
const INFRASTRUCTURE_ERRORS: Record<number, string> = {
  400: 'A parameter or body field is malformed or invalid, or unknown: an unknown body field or query parameter is refused, the message naming it (`body.criteria.orgID is not allowed`)',
  401: 'Token missing, invalid, revoked or expired',
  413: 'Request body exceeds the size limit',
  429: "Too many requests: the token's rate limit (ECS_RATE_LIMIT_PER_MINUTE), its share of the operation's admission lane, or the address's failed authentications; see Retry-After",
  503: "Store unavailable, request timed out, or the operation's admission lane full; retry after Retry-After seconds",
};

function infrastructureErrors(spec: RouteSpec): number[] {
  // Any operation refuses an unknown query parameter (400); an Idempotency-Key can be reused for another request (409).
  return [400, 401, 429, 503, ...(spec.body ? [413] : []), ...(spec.idempotent ? [409] : [])];
}

/** The Idempotency-Key header of `idempotent` operations (an extension of the spec). */
const idempotencyKeyParameter: JsonSchema = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Extension: a repeat with the same key and request from the same token answers the first outcome and creates or moves nothing more; ' +
    'the same key with another request answers 409. Keys expire after ECS_IDEMPOTENCY_KEY_TTL_SECONDS (default 24 h).',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
  'x-extension': true,
};

function parameters(spec: RouteSpec, components: Components): JsonSchema[] {
  const out: JsonSchema[] = spec.idempotent ? [idempotencyKeyParameter] : [];
  const names = [...spec.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  const paramSchemas = spec.params
    ? (toSchema(spec.params, components).properties as Record<string, JsonSchema> | undefined)
    : {};
  for (const name of names) {
    // A parameter may state its OpenAPI form with .meta({ openapi }) when joi converts it (e.g. a comma list).
    const metas = (spec.params?.extract(paramKey(name))?.describe().metas ?? []) as { openapi?: JsonSchema }[];
    const override = metas.find((m) => m.openapi)?.openapi;
    out.push({
      name,
      in: 'path',
      required: true,
      ...(override
        ? { style: 'simple', schema: correctSchema(override) }
        : { schema: paramSchemas?.[paramKey(name)] ?? { type: 'string' } }),
    });
  }
  if (spec.query) {
    const q = toSchema(spec.query, components);
    const required = new Set((q.required as string[] | undefined) ?? []);
    for (const [name, { deprecated, ...schema }] of Object.entries((q.properties as Record<string, JsonSchema>) ?? {})) {
      // `.meta({ deprecated: true })` deprecates the parameter, where client generators look for it.
      out.push({ name, in: 'query', required: required.has(name), ...(deprecated === true ? { deprecated } : {}), schema });
    }
  }
  return out;
}

/** Builds the document for a route table. */
export function buildOpenApi(routes: RouteSpec[], version: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  const components = new Components();
  components.schemas.ErrorBody = errorBodySchema;
  for (const spec of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(spec.responses)) {
      responses[status] = {
        description: r.description,
        ...(r.schema || r.contentType
          ? {
              content: Object.fromEntries(
                [r.contentType ?? 'application/json']
                  .flat()
                  .map((t) => [t, { schema: r.schema ? toSchema(r.schema, components) : { type: 'string' } }]),
              ),
            }
          : {}),
      };
    }
    for (const status of [...new Set([...spec.errors, ...infrastructureErrors(spec)])].sort()) {
      responses[String(status)] = {
        description: INFRASTRUCTURE_ERRORS[status] ?? STATUS_CODES[status] ?? 'Error',
        content: { 'application/json': { schema: ERROR_REF } },
      };
    }
    const op: Record<string, unknown> = {
      operationId: spec.operationId,
      summary: spec.summary,
      tags: [spec.tag],
      parameters: parameters(spec, components),
      responses,
      ...(spec.sec ? { security: [{ 'token-security': [] }] } : {}),
      'x-roles': ['system', ...spec.roles],
      ...(spec.extension ? { 'x-extension': true } : {}),
    };
    if (spec.body) {
      const described = spec.body.describe() as { flags?: { presence?: string } };
      op.requestBody = {
        required: described.flags?.presence === 'required',
        content: { [spec.bodyContentType ?? 'application/json']: { schema: toSchema(spec.body, components) } },
      };
    }
    const p = API_PREFIX + spec.path;
    paths[p] ??= {};
    paths[p][spec.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Endpoint Control Service',
      version,
      description:
        'Administers managed endpoints (agents, UTM firewalls, LTE routers) and the records attached to them. Operations marked x-extension go beyond the interface specification.',
    },
    servers: [{ url: '/' }],
    // Every tag the operations use, declared in the order they first appear (Swagger UI's grouping order).
    tags: [...new Set(routes.map((spec) => spec.tag))].map((name) => ({ name })),
    components: {
      securitySchemes: { 'token-security': { type: 'apiKey', in: 'header', name: TOKEN_HEADER } },
      schemas: components.sorted(),
    },
    paths,
  };
}

/** A browsable page over the document (Swagger UI served from the swagger-ui-dist package). */
export function docsPage(openApiUrl: string, assetsBase: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Endpoint Control Service API</title>
<link rel="stylesheet" href="${assetsBase}/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="${assetsBase}/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: ${JSON.stringify(openApiUrl)}, dom_id: '#swagger-ui' });</script>
</body></html>`;
}
