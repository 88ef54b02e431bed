import type { OpHandler } from '../conversion-context.js';
import { convOps } from './conv.js';
import { elementwiseOps } from './elementwise.js';
import { indexingOps } from './indexing.js';
import { mathOps } from './math.js';
import { shapeOps } from './shape.js';

/** The op mapping table: TF op name → handler. Ops not listed here fail the conversion by name. */
export const opTable: Record<string, OpHandler> = {
  ...elementwiseOps,
  ...convOps,
  ...shapeOps,
  ...indexingOps,
  ...mathOps,
};
