import { OnnxGraphBuilder, type OnnxDType } from './onnx-writer.js';
import type { ConstTensor, DType, TfNode } from './tfjs-model.js';

/** Converts one TF node; returns the ONNX tensor names of the node's outputs, in TF output order. */
export type OpHandler = (node: TfNode, ctx: ConversionContext) => string[];

/** Thrown for a graph that uses an op the converter has no mapping for. */
export class UnsupportedOpError extends Error {
  constructor(
    readonly op: string,
    readonly nodeName: string,
  ) {
    super(`unsupported TFJS op "${op}" (node ${nodeName})`);
    this.name = 'UnsupportedOpError';
  }
}

interface Produced {
  name: string;
  dtype: DType;
}

/** Splits a TF input reference (`node`, `node:1`) into node name and output index. */
export function parseRef(ref: string): { node: string; index: number } {
  const match = /^(.*):(\d+)$/.exec(ref);
  return match ? { node: match[1], index: Number(match[2]) } : { node: ref, index: 0 };
}

/**
 * What op handlers see: the graph being built, the converted names and element types of TF tensors, and the
 * decoded constants (handlers read constants directly when ONNX wants them as attributes or int64 tensors).
 */
export class ConversionContext {
  readonly g = new OnnxGraphBuilder();
  private readonly produced = new Map<string, Produced>();

  constructor(private readonly consts: Map<string, ConstTensor>) {}

  private key(ref: string): string {
    const { node, index } = parseRef(ref);
    return `${node}:${index}`;
  }

  /** Data inputs of a node (control dependencies `^x` dropped). */
  dataInputs(node: TfNode): string[] {
    return (node.input ?? []).filter((i) => !i.startsWith('^'));
  }

  private ref(node: TfNode, i: number): string {
    const ref = this.dataInputs(node)[i];
    if (ref === undefined) throw new Error(`node ${node.name} (${node.op}) has no input ${i}`);
    return ref;
  }

  /** Records the ONNX tensor that holds output `index` of TF node `name`. */
  define(name: string, index: number, onnxName: string, dtype: DType): void {
    this.produced.set(`${name}:${index}`, { name: onnxName, dtype });
  }

  /** The constant behind input `i`, when it is a Const node. */
  constInput(node: TfNode, i: number): ConstTensor | undefined {
    const { node: source, index } = parseRef(this.ref(node, i));
    return index === 0 ? this.consts.get(source) : undefined;
  }

  /** The constant behind input `i`; fails clearly when the graph computes it at run time. */
  requireConst(node: TfNode, i: number, what: string): ConstTensor {
    const value = this.constInput(node, i);
    if (!value) throw new Error(`node ${node.name} (${node.op}): ${what} must be a constant`);
    return value;
  }

  /** Constant input `i` as plain numbers. */
  constValues(node: TfNode, i: number, what: string): number[] {
    return Array.from(this.requireConst(node, i, what).data);
  }

  /** The ONNX name for input `i`; constants become initializers on first use. */
  input(node: TfNode, i: number): string {
    const ref = this.ref(node, i);
    const key = this.key(ref);
    const known = this.produced.get(key);
    if (known) return known.name;
    const value = this.constInput(node, i);
    if (!value) throw new Error(`node ${node.name} (${node.op}): input ${ref} was not converted`);
    const name = this.g.initializer(parseRef(ref).node, value.dtype, value.shape, value.data);
    this.produced.set(key, { name, dtype: value.dtype });
    return name;
  }

  /** The element type of input `i`. */
  inputDType(node: TfNode, i: number): DType {
    const key = this.key(this.ref(node, i));
    const known = this.produced.get(key)?.dtype ?? this.constInput(node, i)?.dtype;
    if (!known) throw new Error(`node ${node.name} (${node.op}): unknown type of input ${i}`);
    return known;
  }

  /** Input `i` as an int64 tensor (ONNX wants int64 for shapes, axes and indices). */
  int64Input(node: TfNode, i: number): string {
    const value = this.constInput(node, i);
    if (value) return this.g.int64(Array.from(value.data), value.shape);
    return this.cast(this.input(node, i), 'int64');
  }

  /** Casts a tensor to an ONNX element type. */
  cast(name: string, to: OnnxDType): string {
    const codes: Record<OnnxDType, number> = { float32: 1, int32: 6, int64: 7, bool: 9 };
    return this.g.op('Cast', [name], { to: { kind: 'int', value: codes[to] } });
  }
}
