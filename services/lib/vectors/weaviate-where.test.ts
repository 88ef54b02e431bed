import { describe, expect, it } from '@jest/globals';
import weaviate, { Filters } from 'weaviate-client';
import { VectorStoreUnavailableError } from './vector-store.js';
import { graphQLWhere, valueFieldFor } from './weaviate-where.js';

describe('valueFieldFor', () => {
  it("takes the field from the property's declared type, never from the JavaScript value", () => {
    expect(valueFieldFor('number', 3)).toBe('valueNumber');
    expect(valueFieldFor('number', 2.5)).toBe('valueNumber');
    expect(valueFieldFor('int', 3)).toBe('valueInt');
    expect(valueFieldFor('text', 'x')).toBe('valueText');
    expect(valueFieldFor('boolean', true)).toBe('valueBoolean');
    expect(valueFieldFor('date', '2026-01-01T00:00:00Z')).toBe('valueDate');
  });

  it('uses the base type of an array property and the Array variant for a list of values', () => {
    expect(valueFieldFor('text[]', 'car')).toBe('valueText');
    expect(valueFieldFor('text[]', ['car', 'bus'])).toBe('valueTextArray');
    expect(valueFieldFor('number', [1, 2.5])).toBe('valueNumberArray');
    expect(valueFieldFor('int[]', [1, 2])).toBe('valueIntArray');
  });

  it('refuses a data type no filter value fits', () => {
    expect(() => valueFieldFor('geoCoordinates', 1)).toThrow(VectorStoreUnavailableError);
  });
});

describe('graphQLWhere', () => {
  const types: Record<string, string> = { timestamp: 'number', frame_id: 'int', tags: 'text[]', record_id: 'text' };
  const where = weaviate.filter;

  it('turns a weaviate-client filter into a GraphQL where, each value in its property type’s field', () => {
    const filter = Filters.and(
      where.byProperty('record_id').like('*'),
      Filters.or(where.byProperty('timestamp').greaterOrEqual(3), where.byProperty('timestamp').lessOrEqual(0)),
      where.byProperty('frame_id').notEqual(4),
      where.byProperty('tags').containsAll(['car']),
    );
    expect(graphQLWhere(filter, (property) => types[property])).toEqual({
      operator: 'And',
      operands: [
        { operator: 'Like', path: ['record_id'], valueText: '*' },
        {
          operator: 'Or',
          operands: [
            { operator: 'GreaterThanEqual', path: ['timestamp'], valueNumber: 3 },
            { operator: 'LessThanEqual', path: ['timestamp'], valueNumber: 0 },
          ],
        },
        { operator: 'NotEqual', path: ['frame_id'], valueInt: 4 },
        { operator: 'ContainsAll', path: ['tags'], valueTextArray: ['car'] },
      ],
    });
  });
});
