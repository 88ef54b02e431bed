// The house's boundaries as import rules (eslint-plugin-import-x's no-restricted-paths, on resolved paths): the layout
// that README.md's "Layout" section describes, checked by `npm run lint`. eslint.boundaries.test.ts shows each fires.
import { readdirSync } from 'node:fs';
import { URL } from 'node:url';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';

/** The services: every folder of services/ but the shared kit. */
const SERVICES = readdirSync(new URL('./services/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== 'lib')
  .map((entry) => entry.name);

/** The operator's drivers. */
const DRIVERS = readdirSync(new URL('./operator/drivers/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

/** Test support, wherever it lives: never imported by production code. */
export const TEST_SUPPORT = ['**/test/**', '**/testing/**', '**/*.test.ts', '**/*.contract.ts'];

/** Files that are not production code: tests, test support and benchmarks may import test support. */
const NOT_PRODUCTION = [...TEST_SUPPORT, 'bench/**'];

/** The operator parts a service may use: the ports, the resource API and the service-side control plane. */
const CONTROL_PLANE_SURFACE = ['./operator/ports', './operator/api', './operator/service-control-plane.ts'];

const zones = [
  // A service never imports another service.
  ...SERVICES.map((service) => ({
    target: `./services/${service}`,
    from: SERVICES.filter((other) => other !== service).map((other) => `./services/${other}`),
    message: 'A service never imports another service: share through services/lib or the resource API.',
  })),
  // A service reaches the control plane only through its surface, never a controller or a driver.
  ...SERVICES.map((service) => ({
    target: `./services/${service}`,
    from: './operator',
    except: CONTROL_PLANE_SURFACE.map((p) => p.replace('./operator', '.')),
    message: 'A service uses the control plane only through operator/ports, operator/api and service-control-plane.ts.',
  })),
  // The shared kit stands below every service and the operator.
  {
    target: './services/lib',
    from: [...SERVICES.map((service) => `./services/${service}`), './operator', './bin'],
    message: 'services/lib imports no service and no operator part.',
  },
  // Controllers decide; drivers act. A controller reaches no driver, not even through a configuration module.
  {
    target: './operator/controllers',
    from: ['./operator/drivers', './operator/config.ts', './operator/main.ts', './operator/embedded-control-plane.ts'],
    message:
      'Controllers never import a driver (or the operator configuration that names drivers): use operator/ports.',
  },
  // Drivers never import each other or a controller.
  ...DRIVERS.map((driver) => ({
    target: `./operator/drivers/${driver}`,
    from: [
      ...DRIVERS.filter((other) => other !== driver).map((other) => `./operator/drivers/${other}`),
      './operator/controllers',
    ],
    message: 'A driver never imports another driver or a controller.',
  })),
  // The command line is the top: nothing imports it.
  {
    target: ['./services', './operator', './test', './bench', './hack'],
    from: './bin',
    message: 'Nothing imports bin/: it is the entry point.',
  },
];

/**
 * The boundary rules, for production code (tests and their support may wire any parts together, as main.ts does), and
 * production code never imports test support.
 */
export const boundaries = [
  {
    files: ['**/*.ts'],
    ignores: NOT_PRODUCTION,
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            ...zones,
            {
              target: './',
              from: TEST_SUPPORT,
              message: 'Production code never imports test support (test/, testing/, *.test.ts, *.contract.ts).',
            },
          ],
        },
      ],
    },
  },
];
