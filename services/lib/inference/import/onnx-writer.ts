import onnxProto from 'onnx-proto';
import type { ConstTensor, DType } from './tfjs-model.js';

const { onnx } = onnxProto;

/** ONNX element types the writer emits (int64 exists only where ONNX demands it: shapes, axes, indices). */
export type OnnxDType = DType | 'int64';

const elemType: Record<OnnxDType, number> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  int32: onnx.TensorProto.DataType.INT32,
  int64: onnx.TensorProto.DataType.INT64,
  bool: onnx.TensorProto.DataType.BOOL,
};

/** A node attribute, tagged with its ONNX type. */
export type OnnxAttr =
  | { kind: 'int'; value: number }
  | { kind: 'ints'; value: number[] }
  | { kind: 'float'; value: number }
  | { kind: 'string'; value: string }
  | { kind: 'tensor'; value: ConstTensor };

/** Attribute helpers, so call sites read `{ axis: int(1) }`. */
export const int = (value: number): OnnxAttr => ({ kind: 'int', value });
export const ints = (value: number[]): OnnxAttr => ({ kind: 'ints', value });
export const float = (value: number): OnnxAttr => ({ kind: 'float', value });
export const str = (value: string): OnnxAttr => ({ kind: 'string', value });
export const tensorAttr = (value: ConstTensor): OnnxAttr => ({ kind: 'tensor', value });

/** Graph input/output declaration; a dimension given as a string is symbolic (dynamic). */
export interface ValueDecl {
  name: string;
  dtype: OnnxDType;
  shape?: (number | string)[];
}

function tensorProto(
  name: string,
  dtype: OnnxDType,
  shape: number[],
  data: ArrayBufferView,
): onnxProto.onnx.ITensorProto {
  return {
    name,
    dataType: elemType[dtype],
    dims: shape,
    rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  };
}

function attributeProto(name: string, attr: OnnxAttr): onnxProto.onnx.IAttributeProto {
  const T = onnx.AttributeProto.AttributeType;
  switch (attr.kind) {
    case 'int':
      return { name, type: T.INT, i: attr.value };
    case 'ints':
      return { name, type: T.INTS, ints: attr.value };
    case 'float':
      return { name, type: T.FLOAT, f: attr.value };
    case 'string':
      return { name, type: T.STRING, s: new TextEncoder().encode(attr.value) };
    case 'tensor':
      return { name, type: T.TENSOR, t: tensorProto('', attr.value.dtype, attr.value.shape, attr.value.data) };
  }
}

function valueInfo(decl: ValueDecl): onnxProto.onnx.IValueInfoProto {
  const shape = decl.shape && {
    dim: decl.shape.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })),
  };
  return { name: decl.name, type: { tensorType: { elemType: elemType[decl.dtype], shape } } };
}

/** Accumulates nodes and initializers and serialises them as an opset-13 ONNX model. */
export class OnnxGraphBuilder {
  private readonly nodes: onnxProto.onnx.INodeProto[] = [];
  private readonly initializers: onnxProto.onnx.ITensorProto[] = [];
  private readonly inputs: ValueDecl[] = [];
  private readonly outputs: ValueDecl[] = [];
  private readonly usedNames = new Set<string>();
  private counter = 0;

  /** A fresh tensor name derived from `base`. */
  uniqueName(base: string): string {
    let name = base;
    while (this.usedNames.has(name)) name = `${base}__${++this.counter}`;
    this.usedNames.add(name);
    return name;
  }

  /** Adds a node; returns the names of its `outputCount` outputs (or uses `outputNames`). */
  node(
    op: string,
    inputs: string[],
    attrs: Record<string, OnnxAttr> = {},
    outputNames: string[] | number = 1,
  ): string[] {
    const outputs =
      typeof outputNames === 'number'
        ? Array.from({ length: outputNames }, () => this.uniqueName(`${op.toLowerCase()}_out`))
        : outputNames.map((n) => this.uniqueName(n));
    this.nodes.push({
      opType: op,
      name: this.uniqueName(`${op}_${this.nodes.length}`),
      input: inputs,
      output: outputs,
      attribute: Object.entries(attrs).map(([k, v]) => attributeProto(k, v)),
    });
    return outputs;
  }

  /** Shorthand for a single-output node. */
  op(op: string, inputs: string[], attrs: Record<string, OnnxAttr> = {}): string {
    return this.node(op, inputs, attrs, 1)[0];
  }

  /** Adds a constant tensor; returns its name. */
  initializer(base: string, dtype: OnnxDType, shape: number[], data: ArrayBufferView): string {
    const name = this.uniqueName(base);
    this.initializers.push(tensorProto(name, dtype, shape, data));
    return name;
  }

  /** An int64 constant (shapes, axes, pads). */
  int64(values: number[], shape: number[] = [values.length]): string {
    return this.initializer('const_i64', 'int64', shape, BigInt64Array.from(values.map((v) => BigInt(v))));
  }

  /** A scalar constant of the given element type. */
  scalar(dtype: DType, value: number): string {
    const data =
      dtype === 'float32'
        ? Float32Array.of(value)
        : dtype === 'int32'
          ? Int32Array.of(value)
          : Uint8Array.of(value ? 1 : 0);
    return this.initializer(`const_${dtype}`, dtype, [], data);
  }

  /** Declares a graph input (its name is reserved as-is). */
  addInput(decl: ValueDecl): void {
    this.usedNames.add(decl.name);
    this.inputs.push(decl);
  }

  /** Declares a graph output; `from` is the internal tensor, renamed to `decl.name` through an Identity. */
  addOutput(decl: ValueDecl, from: string): void {
    this.usedNames.add(decl.name);
    this.nodes.push({
      opType: 'Identity',
      name: this.uniqueName(`output_${decl.name}`),
      input: [from],
      output: [decl.name],
    });
    this.outputs.push(decl);
  }

  /** Serialises the model (IR 7, opset 13). */
  encode(graphName: string, docString: string): Uint8Array {
    const model = onnx.ModelProto.create({
      irVersion: 7,
      producerName: 'argus-tfjs-import',
      producerVersion: '1',
      docString,
      opsetImport: [{ domain: '', version: 13 }],
      graph: {
        name: graphName,
        node: this.nodes,
        initializer: this.initializers,
        input: this.inputs.map(valueInfo),
        output: this.outputs.map(valueInfo),
      },
    });
    return onnx.ModelProto.encode(model).finish();
  }
}
