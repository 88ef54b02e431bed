import type { DType, TfAttr, TfNode } from './tfjs-model.js';

/** TF DataType enum values (numeric in some model.json files, `DT_*` strings in others) mapped to tracked types. */
const tfTypes: Record<string, DType> = {
  '1': 'float32',
  DT_FLOAT: 'float32',
  '3': 'int32',
  DT_INT32: 'int32',
  '9': 'int32',
  DT_INT64: 'int32',
  '10': 'bool',
  DT_BOOL: 'bool',
};

function decodeString(value: string | number[]): string {
  return typeof value === 'string'
    ? Buffer.from(value, 'base64').toString('utf8')
    : Buffer.from(value).toString('utf8');
}

function attr(node: TfNode, name: string): TfAttr | undefined {
  return node.attr?.[name];
}

/** An integer attribute, or `fallback` when absent. */
export function attrInt(node: TfNode, name: string, fallback = 0): number {
  const value = attr(node, name)?.i;
  return value === undefined ? fallback : Number(value);
}

/** A float attribute, or `fallback` when absent. */
export function attrFloat(node: TfNode, name: string, fallback = 0): number {
  return attr(node, name)?.f ?? fallback;
}

/** A boolean attribute (absent means false). */
export function attrBool(node: TfNode, name: string): boolean {
  return attr(node, name)?.b ?? false;
}

/** A string attribute, decoded from base64 or bytes. */
export function attrString(node: TfNode, name: string, fallback = ''): string {
  const value = attr(node, name)?.s;
  return value === undefined ? fallback : decodeString(value);
}

/** An integer-list attribute. */
export function attrInts(node: TfNode, name: string): number[] {
  return (attr(node, name)?.list?.i ?? []).map(Number);
}

/** A string-list attribute, decoded. */
export function attrStrings(node: TfNode, name: string): string[] {
  return (attr(node, name)?.list?.s ?? []).map(decodeString);
}

/** A type attribute mapped to a tracked element type (undefined when absent). */
export function attrDType(node: TfNode, name: string): DType | undefined {
  const value = attr(node, name)?.type;
  if (value === undefined) return undefined;
  const dtype = tfTypes[String(value)];
  if (!dtype) throw new Error(`node ${node.name} (${node.op}): unsupported data type ${value} in attribute ${name}`);
  return dtype;
}

/** A Placeholder's declared shape; unknown dimensions are -1. */
export function attrShape(node: TfNode, name: string): number[] | undefined {
  return attr(node, name)?.shape?.dim?.map((d) => Number(d.size));
}
