/**
 * Shedding at the door. While a reading lane (interactive or heavy) is shrunk for
 * the agents and its queue stands, a new request of that lane would only wait its few
 * milliseconds and be shed. The door answers it before Koa sees it — no context, middleware
 * chain, authentication, body or access-log line, only Node's own parsing and a prepared 503
 * in the section-7 body — because under that overload what the agents are short of is the
 * service's own CPU: every SOC request read from a socket costs it, shed or not
 * (bench/README.md, "Overload"). Requests of the agent and admin lanes never meet the door
 * (writes are audited and agents are never shed by it), nor does anything while the lanes are
 * off. Door answers are counted in `ecs_admission_shed_total` with the other 503s, and summed
 * in one log line a second instead of one line each.
 */
import type http from 'node:http';
import crypto from 'node:crypto';
import { errorBody } from '../errors.js';
import type { Logger } from '../log.js';
import { DEFAULT_LANES, type Admission, type Lane } from './admission.js';
import Router from '@koa/router';
import { API_PREFIX, bySegment, koaPath, requestSegment, type RouteSpec } from './routes.js';

/** Answers a request at the door and returns true, or returns false to let the app handle it. */
export type Door = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

const LOG_EVERY_MS = 1000;

/**
 * The lane of a request by method and path, matched as the app's router matches it (the same
 * @koa/router over the same declarations, grouped by first segment), for the routes the door may
 * answer: those of the lanes that shed a standing queue (the others are never looked up).
 */
function laneLookup(routes: readonly RouteSpec[]): (method: string, path: string) => Lane | undefined {
  const routers = new Map<string, Router>();
  for (const [segment, group] of bySegment(routes.filter((r) => DEFAULT_LANES[r.lane].shedStanding))) {
    const router = new Router({ prefix: API_PREFIX });
    for (const r of group) router.register(koaPath(r.path), [r.method], () => undefined, { name: r.lane });
    routers.set(segment, router);
  }
  return (method, path) => {
    const segment = requestSegment(path);
    const router = segment === undefined ? undefined : routers.get(segment);
    return router?.match(path, method).pathAndMethod[0]?.name as Lane | undefined;
  };
}

export function door(routes: readonly RouteSpec[], admission: Admission, log: Logger): Door {
  const laneOf = laneLookup(routes);
  let shed = 0;
  let since = Date.now();
  return (req, res) => {
    if (!admission.sheddingAtDoor()) return false;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const lane = laneOf(req.method ?? '', path);
    if (lane === undefined) return false;
    const err = admission.shedAtDoor(lane);
    if (err === undefined) return false;
    const requestId = crypto.randomUUID();
    const body = JSON.stringify(errorBody(err, path, { requestId }));
    res.writeHead(err.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
      'x-request-id': requestId,
      ...err.headers,
    });
    res.end(body);
    shed += 1;
    const now = Date.now();
    if (now - since >= LOG_EVERY_MS) {
      log.info({ shedAtDoor: shed, seconds: Math.round((now - since) / 100) / 10 }, 'requests shed at the door');
      shed = 0;
      since = now;
    }
    return true;
  };
}
