import { expect } from 'chai';
import { concreteIndexName, loadTemplates } from '../../src/store/indices.js';

describe('index templates', () => {
  it("no logical index's template pattern matches another's concrete index (Elasticsearch refuses overlapping templates of one priority)", () => {
    const names = loadTemplates().map((t) => t.name);
    for (const a of names) {
      const pattern = `ecs-${a}-`;
      for (const b of names) {
        if (a === b) continue;
        expect(concreteIndexName('ecs', b, 1).startsWith(pattern), `the template of ${a} (${pattern}*) would match ${b}'s indices`).to.equal(false);
      }
    }
  });
});
