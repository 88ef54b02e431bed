import { describe, expect, it } from '@jest/globals';
import weaviate, { type FilterValue } from 'weaviate-client';
import type { GraphQLWhere } from '../weaviate-where.js';
import { FakeWeaviate } from './fake-weaviate.js';

const where = weaviate.filter;

/** A collection with an int, a number and a text property, and three objects: x=1, x=2 and one without x. */
function seeded() {
  const fake = new FakeWeaviate();
  fake.addCollection('Things', [
    { name: 'record_id', dataType: 'text' },
    { name: 'frame', dataType: 'int' },
    { name: 'x', dataType: 'number' },
  ]);
  const things = fake.collections.get('Things');
  /** GraphQL `{Aggregate{Things(where: …){meta{count}}}}`, as counts are sent. */
  const count = async (filter?: GraphQLWhere) => {
    const query = fake.graphql.aggregate().withClassName('Things').withFields('meta { count }');
    if (filter) query.withWhere(filter);
    return (await query.do()).data.Aggregate.Things[0].meta.count;
  };
  return { fake, things, count };
}

async function insertThree(things: ReturnType<typeof seeded>['things']) {
  await things.data.insertMany([
    { id: 'a', properties: { record_id: 'a', frame: 1, x: 1 }, vectors: [1, 0] },
    { id: 'b', properties: { record_id: 'b', frame: 2, x: 2.5 }, vectors: [0, 1] },
    { id: 'c', properties: { record_id: 'c', frame: 3 }, vectors: [1, 1] },
  ]);
}

const ids = (result: { objects: Array<{ uuid: string }> }) => result.objects.map((o) => o.uuid).sort();

describe('FakeWeaviate models the server', () => {
  it('refuses a value field other than the property type over GraphQL, with the server message', async () => {
    const { things, count } = seeded();
    await insertThree(things);
    await expect(count({ operator: 'GreaterThanEqual', path: ['x'], valueInt: 1 })).rejects.toThrow(
      `invalid 'where' filter: data type filter cannot use "valueInt" on type "number", use "valueNumber" instead`,
    );
    await expect(
      count({
        operator: 'And',
        operands: [
          { operator: 'Equal', path: ['frame'], valueInt: 1 },
          { operator: 'Equal', path: ['x'], valueInt: 1 },
        ],
      }),
    ).rejects.toThrow(
      `invalid 'where' filter: child operand at position 1: data type filter cannot use "valueInt" on type "number", use "valueNumber" instead`,
    );
    expect(await count({ operator: 'GreaterThanEqual', path: ['x'], valueNumber: 1 })).toBe(2);
    expect(await count({ operator: 'Equal', path: ['frame'], valueInt: 1 })).toBe(1);
  });

  it('takes integral values for number properties over gRPC, refuses fractional ones for int and mixed lists', async () => {
    const { things } = seeded();
    await insertThree(things);
    const near = (filters: FilterValue) =>
      things.query.nearVector([1, 0], { limit: 5, filters, returnMetadata: ['distance'] });
    expect(ids(await near(where.byProperty('x').greaterOrEqual(1)))).toEqual(['a', 'b']);
    await expect(near(where.byProperty('frame').equal(1.5))).rejects.toThrow(
      'filtering for integer, but received a floating point number 1.5',
    );
    await expect(near(where.byProperty('x').containsAny([1, 2.5]))).rejects.toThrow('unknown value type');
  });

  it('answers NotEqual over every doc id handed out: objects without the property, and deleted ones when counting', async () => {
    const { fake, things, count } = seeded();
    await insertThree(things);
    const notOne = where.byProperty('x').notEqual(1.5);
    const notOneWhere: GraphQLWhere = { operator: 'NotEqual', path: ['x'], valueNumber: 1.5 };
    expect(await count(notOneWhere)).toBe(3);
    expect((await things.data.deleteMany(where.byProperty('record_id').equal('b'))).successful).toBe(1);
    // b is gone, but its doc id is still in the complement: the count says 3 of 2 objects.
    expect(fake.objectCount('Things')).toBe(2);
    expect(await count(notOneWhere)).toBe(3);
    // A search or a delete looks each doc id up and skips those without an object.
    expect(
      ids(await things.query.nearVector([1, 0], { limit: 5, filters: notOne, returnMetadata: ['distance'] })),
    ).toEqual(['a', 'c']);
    // And with a condition on a property every object holds drops the stale doc ids.
    const anchored: GraphQLWhere = {
      operator: 'And',
      operands: [{ operator: 'Like', path: ['record_id'], valueText: '*' }, notOneWhere],
    };
    expect(await count(anchored)).toBe(2);
    // Re-writing an object with another vector gives it a new doc id; the old one stays in the complement.
    await things.data.insertMany([{ id: 'a', properties: { record_id: 'a', frame: 1, x: 1.5 }, vectors: [0.5, 0.5] }]);
    expect(await count(notOneWhere)).toBe(3);
    expect(await count(anchored)).toBe(1);
    expect((await things.data.deleteMany(notOne)).matches).toBe(1);
  });
});
