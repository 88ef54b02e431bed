/**
 * @jest-environment ./services/lib/inference/onnx-test-environment.ts
 */
import { describe, expect, it } from '@jest/globals';
import ort from 'onnxruntime-node';
import { UnsupportedOpError } from './conversion-context.js';
import { convertTfjsGraph } from './convert.js';
import type { TfAttr, TfjsModel, TfNode, WeightSpec } from './tfjs-model.js';
import { loadReferenceModel, maxAbsDiff, runReference } from './tfjs-reference.js';

type Feed = { data: Float32Array | Int32Array; shape: number[]; dtype: 'float32' | 'int32' };

const dt = (dtype: 'float32' | 'int32'): TfAttr => ({ type: dtype === 'float32' ? 'DT_FLOAT' : 'DT_INT32' });

function placeholder(name: string, dtype: 'float32' | 'int32', shape: number[]): TfNode {
  return {
    name,
    op: 'Placeholder',
    attr: { dtype: dt(dtype), shape: { shape: { dim: shape.map((s) => ({ size: String(s) })) } } },
  };
}

/** A tiny in-memory TFJS graph: constants become int32 weights (enough for axes, begin/end and divisors). */
function graph(nodes: TfNode[], consts: Record<string, { data: number[]; shape: number[] }> = {}): TfjsModel {
  const weightSpecs: WeightSpec[] = Object.entries(consts).map(([name, c]) => ({
    name,
    shape: c.shape,
    dtype: 'int32',
  }));
  const constNodes: TfNode[] = Object.keys(consts).map((name) => ({ name, op: 'Const', attr: { dtype: dt('int32') } }));
  const values = Object.values(consts).flatMap((c) => c.data);
  return {
    json: {
      format: 'graph-model',
      modelTopology: { node: [...constNodes, ...nodes], versions: {} } as TfjsModel['json']['modelTopology'],
      weightsManifest: [],
    },
    weightSpecs,
    weightData: new Uint8Array(Int32Array.from(values).buffer),
  };
}

/** Runs a synthetic graph through the converter + onnxruntime and through TFJS; returns both outputs. */
async function compare(model: TfjsModel, feeds: Record<string, Feed>, output: string, withReference = true) {
  const bytes = convertTfjsGraph(model, {
    graphName: 'test',
    inputs: Object.keys(feeds).map((n) => ({ tfName: n, onnxName: n })),
    outputs: [{ tfName: output, onnxName: 'out' }],
  });
  const session = await ort.InferenceSession.create(bytes);
  const ortFeeds = Object.fromEntries(
    Object.entries(feeds).map(([n, f]) => [n, new ort.Tensor(f.dtype, f.data, f.shape)]),
  );
  const got = (await session.run(ortFeeds)).out;
  const [expected] = withReference ? await runReference(await loadReferenceModel(model), feeds, [output]) : [];
  return { got: Array.from(got.data as Float32Array, Number), dims: got.dims, expected: Array.from(expected ?? []) };
}

describe('convertTfjsGraph', () => {
  it('fails naming the first unsupported op and its node', () => {
    const model = graph([placeholder('x', 'float32', [2]), { name: 'weird/op', op: 'Erfinv', input: ['x'] }]);
    const run = () =>
      convertTfjsGraph(model, {
        graphName: 't',
        inputs: [{ tfName: 'x', onnxName: 'x' }],
        outputs: [{ tfName: 'weird/op', onnxName: 'y' }],
      });
    expect(run).toThrow(UnsupportedOpError);
    expect(run).toThrow('unsupported TFJS op "Erfinv" (node weird/op)');
  });

  it('drops nodes the requested outputs do not need (an unsupported op elsewhere is fine)', async () => {
    const model = graph([
      placeholder('x', 'float32', [3]),
      { name: 'y', op: 'Relu', input: ['x'], attr: { T: dt('float32') } },
      { name: 'unused', op: 'Erfinv', input: ['x'] },
    ]);
    // TFJS itself refuses the whole graph, so only the converted model runs here.
    const feeds: Record<string, Feed> = { x: { data: Float32Array.of(-1, 0, 2), shape: [3], dtype: 'float32' } };
    const { got } = await compare(model, feeds, 'y', false);
    expect(got).toEqual([0, 0, 2]);
  });

  it('floors integer FloorDiv and FloorMod on negative numbers like TF', async () => {
    const nodes = [
      placeholder('a', 'int32', [6]),
      { name: 'div', op: 'FloorDiv', input: ['a', 'b'], attr: { T: dt('int32') } },
      { name: 'mod', op: 'FloorMod', input: ['a', 'b'], attr: { T: dt('int32') } },
      { name: 'out', op: 'Pack', input: ['div', 'mod'], attr: { T: dt('int32'), N: { i: 2 }, axis: { i: 0 } } },
    ];
    const model = graph(nodes, { b: { data: [3, 3, -3, -3, 4, 1], shape: [6] } });
    const feeds: Record<string, Feed> = { a: { data: Int32Array.of(-7, 7, 7, -7, -8, 0), shape: [6], dtype: 'int32' } };
    const { got, expected } = await compare(model, feeds, 'out');
    expect(got).toEqual([-3, 2, -3, 2, -2, 0, 2, 1, -2, -1, 0, 0]);
    expect(expected).toEqual(got);
  });

  it('honours BatchMatMul adjoint flags on rank-3 operands', async () => {
    const nodes = [
      placeholder('x', 'float32', [2, 4, 3]),
      placeholder('y', 'float32', [2, 5, 4]),
      {
        name: 'mm',
        op: 'BatchMatMulV2',
        input: ['x', 'y'],
        attr: { T: dt('float32'), adj_x: { b: true }, adj_y: { b: true } },
      },
    ];
    const x = Float32Array.from({ length: 24 }, (_, i) => Math.sin(i));
    const y = Float32Array.from({ length: 40 }, (_, i) => Math.cos(i));
    const { got, dims, expected } = await compare(
      graph(nodes),
      { x: { data: x, shape: [2, 4, 3], dtype: 'float32' }, y: { data: y, shape: [2, 5, 4], dtype: 'float32' } },
      'mm',
    );
    expect(dims).toEqual([2, 3, 5]);
    expect(maxAbsDiff(got, expected)).toBeLessThan(1e-5);
  });

  it('maps StridedSlice begin/end/shrink masks and negative strides', async () => {
    const nodes = [
      placeholder('x', 'float32', [2, 3, 4]),
      {
        name: 'ss',
        op: 'StridedSlice',
        input: ['x', 'begin', 'end', 'strides'],
        attr: { T: dt('float32'), begin_mask: { i: 2 }, end_mask: { i: 4 }, shrink_axis_mask: { i: 1 } },
      },
    ];
    const model = graph(nodes, {
      begin: { data: [1, 0, 3], shape: [3] },
      end: { data: [2, 2, 0], shape: [3] },
      strides: { data: [1, 1, -2], shape: [3] },
    });
    const x = Float32Array.from({ length: 24 }, (_, i) => i);
    // x[1, :2, 3::-2] — checked against TF semantics by hand (tfjs-wasm mis-handles negative strides).
    const feeds: Record<string, Feed> = { x: { data: x, shape: [2, 3, 4], dtype: 'float32' } };
    const { got, dims } = await compare(model, feeds, 'ss', false);
    expect(dims).toEqual([2, 2]);
    expect(got).toEqual([15, 13, 19, 17]);
  });

  it('maps StridedSlice new-axis masks like TFJS (x[:, newaxis, 1:3], as MoveNet MultiPose uses them)', async () => {
    const nodes = [
      placeholder('x', 'float32', [2, 4]),
      {
        name: 'ss',
        op: 'StridedSlice',
        input: ['x', 'begin', 'end', 'strides'],
        attr: { T: dt('float32'), begin_mask: { i: 1 }, end_mask: { i: 1 }, new_axis_mask: { i: 2 } },
      },
    ];
    const model = graph(nodes, {
      begin: { data: [0, 0, 1], shape: [3] },
      end: { data: [0, 0, 3], shape: [3] },
      strides: { data: [1, 1, 1], shape: [3] },
    });
    const feeds: Record<string, Feed> = {
      x: { data: Float32Array.from({ length: 8 }, (_, i) => i), shape: [2, 4], dtype: 'float32' },
    };
    const { got, dims, expected } = await compare(model, feeds, 'ss');
    expect(dims).toEqual([2, 1, 2]);
    expect(got).toEqual([1, 2, 5, 6]);
    expect(got).toEqual(expected);
  });

  it('maps AddN, Reciprocal and Size like TFJS', async () => {
    const nodes = [
      placeholder('x', 'float32', [2, 3]),
      { name: 'sum', op: 'AddN', input: ['x', 'x', 'x'], attr: { T: dt('float32'), N: { i: 3 } } },
      { name: 'inv', op: 'Reciprocal', input: ['sum'], attr: { T: dt('float32') } },
      { name: 'size', op: 'Size', input: ['inv'], attr: { T: dt('float32'), out_type: dt('int32') } },
    ];
    const x = Float32Array.from([1, 2, 4, 5, 8, 10]);
    const feeds: Record<string, Feed> = { x: { data: x, shape: [2, 3], dtype: 'float32' } };
    const inverse = await compare(graph(nodes), feeds, 'inv');
    expect(maxAbsDiff(inverse.got, inverse.expected)).toBeLessThan(1e-6);
    expect(inverse.got[0]).toBeCloseTo(1 / 3);
    const size = await compare(graph(nodes), feeds, 'size');
    expect(size.got).toEqual([6]);
    expect(size.expected).toEqual([6]);
  });
});
