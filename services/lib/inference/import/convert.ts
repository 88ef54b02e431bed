import { ConversionContext, UnsupportedOpError, parseRef } from './conversion-context.js';
import { opTable } from './ops/index.js';
import { attrDType, attrShape } from './tf-attrs.js';
import type { DType, TfNode, TfjsModel } from './tfjs-model.js';
import { decodeWeights } from './weights.js';

/** One graph input: the TF placeholder, its ONNX name and (optionally) a shape overriding the declared one. */
export interface InputMapping {
  tfName: string;
  onnxName: string;
  /** Symbolic dimensions are strings; declared -1 dimensions become symbolic by default. */
  shape?: (number | string)[];
}

/** One graph output: a TF tensor (`node` or `node:1`) exposed under an ONNX name. */
export interface OutputMapping {
  tfName: string;
  onnxName: string;
}

/** What to convert: the graph's inputs and the tensors to expose (anything not needed for them is dropped). */
export interface ConvertOptions {
  graphName: string;
  docString?: string;
  inputs: InputMapping[];
  outputs: OutputMapping[];
}

const comparisonOps = new Set(['Less', 'LessEqual', 'Greater', 'GreaterEqual', 'Equal', 'NotEqual', 'LogicalNot']);

/** Element types of a node's outputs, from its type attributes (falling back to its first input's type). */
function outputDTypes(node: TfNode, ctx: ConversionContext, count: number): DType[] {
  const first = (): DType => ctx.inputDType(node, 0);
  let dtype: DType;
  if (comparisonOps.has(node.op) || node.op.startsWith('Logical')) dtype = 'bool';
  else if (node.op === 'Cast') dtype = attrDType(node, 'DstT')!;
  else if (node.op === 'Shape' || node.op === 'Size' || (node.op === 'Where' && ctx.dataInputs(node).length === 1))
    dtype = 'int32';
  else if (node.op === 'ArgMax') dtype = attrDType(node, 'output_type') ?? 'int32';
  else if (node.op === 'TopKV2') return [first(), 'int32'];
  else if (node.op === 'GatherV2' || node.op === 'GatherNd') dtype = ctx.inputDType(node, 0);
  else if (node.op === 'ScatterNd') dtype = ctx.inputDType(node, 1);
  else if (node.op === 'SparseToDense') dtype = ctx.inputDType(node, 2);
  else if (node.op === 'Select' || node.op === 'SelectV2' || node.op === 'Where') dtype = ctx.inputDType(node, 1);
  else if (node.op === 'Range') dtype = ctx.inputDType(node, 0);
  else if (node.op === 'Fill') dtype = ctx.inputDType(node, 1);
  else if (node.op === 'Split') dtype = ctx.inputDType(node, 1);
  else dtype = attrDType(node, 'T') ?? first();
  return Array.from({ length: count }, () => dtype);
}

/** Nodes needed to compute `targets`, in dependency order (TFJS does not guarantee any order). */
function requiredNodes(nodes: Map<string, TfNode>, targets: string[]): TfNode[] {
  const order: TfNode[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: { name: string; expanded: boolean }[] = targets.map((t) => ({
    name: parseRef(t).node,
    expanded: false,
  }));
  while (stack.length) {
    const top = stack.pop()!;
    if (state.get(top.name) === 'done') continue;
    const node = nodes.get(top.name);
    if (!node) throw new Error(`the graph has no node named ${top.name}`);
    if (top.expanded) {
      state.set(top.name, 'done');
      order.push(node);
      continue;
    }
    if (state.get(top.name) === 'visiting') continue;
    state.set(top.name, 'visiting');
    stack.push({ name: top.name, expanded: true });
    for (const ref of node.input ?? []) {
      const name = parseRef(ref.replace(/^\^/, '')).node;
      if (state.get(name) !== 'done') stack.push({ name, expanded: false });
    }
  }
  return order;
}

/**
 * Converts a TFJS graph model into an opset-13 ONNX model. Tensors stay NHWC; convolutions, pools and resizes are
 * wrapped in Transposes. Fails with {@link UnsupportedOpError} on the first op without a mapping.
 */
export function convertTfjsGraph(model: TfjsModel, options: ConvertOptions): Uint8Array {
  const nodes = new Map(model.json.modelTopology.node.map((n) => [n.name, n]));
  const consts = decodeWeights(model.weightSpecs, model.weightData);
  const ctx = new ConversionContext(consts);
  const inputs = new Map(options.inputs.map((i) => [i.tfName, i]));

  for (const node of requiredNodes(
    nodes,
    options.outputs.map((o) => o.tfName),
  )) {
    if (node.op === 'Const') {
      if (!consts.has(node.name)) throw new Error(`constant ${node.name} has no weights`);
      continue;
    }
    if (node.op === 'Placeholder') {
      const mapping = inputs.get(node.name);
      if (!mapping) throw new Error(`graph input ${node.name} is needed but not mapped`);
      const dtype = attrDType(node, 'dtype') ?? 'float32';
      const declared = attrShape(node, 'shape') ?? [];
      const shape = mapping.shape ?? declared.map((d, i) => (d < 0 ? `${mapping.onnxName}_dim${i}` : d));
      ctx.g.addInput({ name: mapping.onnxName, dtype, shape });
      ctx.define(node.name, 0, mapping.onnxName, dtype);
      continue;
    }
    const handler = opTable[node.op];
    if (!handler) throw new UnsupportedOpError(node.op, node.name);
    const outputs = handler(node, ctx);
    const dtypes = outputDTypes(node, ctx, outputs.length);
    outputs.forEach((name, i) => ctx.define(node.name, i, name, dtypes[i]));
  }

  for (const output of options.outputs) {
    const { node, index } = parseRef(output.tfName);
    const probe: TfNode = { name: `output ${output.onnxName}`, op: 'Output', input: [`${node}:${index}`] };
    ctx.g.addOutput({ name: output.onnxName, dtype: ctx.inputDType(probe, 0) }, ctx.input(probe, 0));
  }
  return ctx.g.encode(options.graphName, options.docString ?? '');
}
