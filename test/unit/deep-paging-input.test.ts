/**
 * A page search wrapped for deep paging hands its handler the request's input with the cursor
 * taken out of the query, and nothing of it read early: the request's logger is an accessor
 * made on first use (src/http/observe.ts), so copying the input must not call it.
 */
import { expect } from 'chai';
import Joi from 'joi';
import { withDeepPaging } from '../../src/http/deep-paging.js';
import type { HandlerInput, Reply, RouteSpec } from '../../src/http/routes.js';
import type { Logger } from '../../src/log.js';

type Input = HandlerInput<unknown, unknown, unknown>;

function pageRoute(seen: Input[]): RouteSpec {
  const spec = {
    operationId: 'searchThings',
    method: 'POST',
    path: '/thing/page-search',
    summary: 'things',
    tag: 'things',
    sec: true,
    roles: ['admin'],
    lane: 'interactive',
    responses: { 200: { description: 'OK', schema: Joi.object({ items: Joi.array().items(Joi.object({ id: Joi.string() })) }) } },
    errors: [400],
    handler: (input: Input): Promise<Reply> => {
      seen.push(input);
      return Promise.resolve({ status: 200, body: { items: [] } });
    },
    deepSearch: () => Promise.reject(new Error('no deep search in this test')),
  };
  const [page] = withDeepPaging([spec as unknown as RouteSpec], { signingKey: 'k'.repeat(32), keepAliveSeconds: 60 });
  return page;
}

describe('a deep-paged page search’s input', () => {
  it('reaches the handler with the cursor taken out, every other field as given, and the logger not made until the handler asks', async () => {
    const seen: Input[] = [];
    const route = pageRoute(seen);
    let made = 0;
    const logger = { info: () => undefined } as unknown as Logger;
    const access = { principal: { role: 'admin' } } as unknown as Input['access'];
    const input: Input = {
      params: { a: 1 },
      query: { other: 'x' },
      body: { pageRequest: { page: 0, size: 20 } },
      access,
      path: '/thing/page-search',
      get log() {
        made += 1;
        return logger;
      },
    };
    const reply = await route.handler(input);
    expect(reply.status).to.equal(200);
    expect(made, 'the logger is not made by the wrapper').to.equal(0);
    const got = seen[0];
    expect(got.query).to.deep.equal({ other: 'x' });
    expect(got.params).to.equal(input.params);
    expect(got.body).to.equal(input.body);
    expect(got.access).to.equal(access);
    expect(got.path).to.equal('/thing/page-search');
    // An accessor of its own would make the input a dictionary-mode object (docs/adr/0154-no-accessor-of-its-own-on-a-request-object.md).
    expect(Object.getOwnPropertyDescriptor(got, 'log'), 'the logger is an accessor of the prototype').to.equal(undefined);
    expect(got.log).to.equal(logger);
    expect(made, 'made on the handler’s first use').to.equal(1);
    expect(input.query, 'the caller’s input is not changed').to.deep.equal({ other: 'x' });
  });
});
