import { expect } from 'chai';
import Joi from 'joi';
import { buildOpenApi } from '../../src/http/openapi.js';
import { defineRoute, ok } from '../../src/http/routes.js';
import { Conformance } from '../helpers/conformance.js';

describe('response conformance checker', () => {
  const doc = buildOpenApi(
    [
      defineRoute({
        operationId: 'probe',
        method: 'GET',
        path: '/probe/{id}',
        summary: 'probe',
        tag: 't',
        lane: 'interactive',
        sec: true,
        roles: [],
        responses: { 200: { description: 'OK', schema: Joi.object({ id: Joi.string().required(), n: Joi.number().integer() }) } },
        errors: [400, 404],
        handler: async () => ok({}),
      }),
      defineRoute({
        operationId: 'probeSearch',
        method: 'POST',
        path: '/probe/{id}/search',
        summary: 'probe search',
        tag: 't',
        lane: 'interactive',
        sec: true,
        roles: [],
        params: Joi.object({ id: Joi.string().required() }),
        query: Joi.object({ page: Joi.number().integer().min(0) }),
        body: Joi.object({
          criteria: Joi.object({ orgId: Joi.string() }),
          open: Joi.object().unknown(true),
          pin: Joi.string().pattern(/^v\d+$/).allow('').description('an empty pin clears it'),
        }).required(),
        responses: { 200: { description: 'OK' } },
        errors: [400],
        handler: async () => ok({}),
      }),
    ],
    'test',
  );
  const c = new Conformance(doc);
  const P = '/endpoint-control-service/v1';
  const err = { message: 'm', status: 404, error: 'Not Found', timestamp: 1, exception: 'NotFoundError', path: '/x' };

  it('accepts a conforming body and a declared error', () => {
    expect(c.check('GET', `${P}/probe/a`, 200, 'application/json', { id: 'a', n: 1 })).to.deep.equal([]);
    expect(c.check('GET', `${P}/probe/a`, 404, 'application/json', err)).to.deep.equal([]);
  });
  it('flags a body that breaks the schema', () => {
    expect(c.check('GET', `${P}/probe/a`, 200, 'application/json', { n: 'x' })).to.have.length(1);
  });
  it('refuses a document whose response schema is loose (a union type), as ajv strict mode does', () => {
    const loose = JSON.parse(JSON.stringify(doc)) as { paths: Record<string, Record<string, Record<string, unknown>>> };
    const op = loose.paths[`${P}/probe/{id}`].get as {
      responses: Record<string, { content: Record<string, { schema: unknown }> }>;
    };
    op.responses['200'].content['application/json'].schema = { type: ['string', 'number'] };
    expect(() => new Conformance(loose)).to.throw(/union type/);
  });
  it('checks requests: an unknown body field or query parameter is refused, an open object takes any field, query text is converted', () => {
    const req = (query: string, body: unknown) => c.checkRequest({ method: 'POST', path: `${P}/probe/a/search`, query: new URLSearchParams(query), body });
    expect(req('page=2', { criteria: { orgId: 'o' }, open: { anything: 1 } })).to.deep.equal([]);
    expect(req('', { criteria: { orgID: 'o' } }).join()).to.contain('(orgID)');
    expect(req('pgae=2', {}).join()).to.contain('query').and.contain('(pgae)');
    expect(req('page=-1', {}).join()).to.contain('query');
    expect(req('', undefined).join()).to.contain('body required');
    // A text joi allows besides its pattern ('' clears a pin) is in the document too.
    expect(req('', { pin: '' })).to.deep.equal([]);
    expect(req('', { pin: 'v2' })).to.deep.equal([]);
    expect(req('', { pin: 'x' })).to.have.length(1);
    expect(c.checkRequest({ method: 'GET', path: `${P}/probe/a`, query: new URLSearchParams(''), body: { x: 1 } }).join()).to.contain('no body declared');
  });
  it('flags an undeclared status and a malformed error body', () => {
    expect(c.check('GET', `${P}/probe/a`, 409, 'application/json', err)[0]).to.contain('not declared');
    expect(c.check('GET', `${P}/probe/a`, 400, 'application/json', { message: 'x' })[0]).to.contain('section-7');
  });
  it('accepts the request and trace ids beside the section-7 fields, typed as the document declares them, and nothing else', () => {
    const traced = { ...err, requestId: 'r-1', traceId: '0af7651916cd43dd8448eb211c80319c' };
    expect(c.check('GET', `${P}/probe/a`, 404, 'application/json', traced)).to.deep.equal([]);
    expect(c.check('GET', `${P}/probe/a`, 404, 'application/json', { ...traced, traceId: 'not-a-trace' })[0]).to.contain('ErrorBody');
    expect(c.check('GET', `${P}/probe/a`, 404, 'application/json', { ...err, spanId: 'b7ad6b7169203331' })[0]).to.contain('section-7');
  });
});
