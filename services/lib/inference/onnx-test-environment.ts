import { TestEnvironment as NodeEnvironment } from 'jest-environment-node';

/**
 * Jest environment for tests that run onnxruntime-node. Jest gives each test file its own realm, whose typed-array
 * constructors differ from the ones the native addon returns outputs in; onnxruntime checks `instanceof`, so outputs
 * would be rejected. Sharing the outer realm's typed arrays fixes that. jest.config.js makes it the default environment.
 */
export default class OnnxTestEnvironment extends NodeEnvironment {
  constructor(...args: ConstructorParameters<typeof NodeEnvironment>) {
    super(...args);
    const shared = {
      ArrayBuffer,
      Float32Array,
      Float64Array,
      Int8Array,
      Int16Array,
      Int32Array,
      BigInt64Array,
      Uint8Array,
      Uint16Array,
      Uint32Array,
      BigUint64Array,
    };
    Object.assign(this.global, shared);
  }
}
