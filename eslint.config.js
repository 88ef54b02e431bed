import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { boundaries } from './eslint.boundaries.js';

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', '.models/', 'charts/', 'coverage/', '.tools/', '.openapi/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Tests, their support and the developer scripts (bench/, hack/) may use `any` where a value of no particular
      // type is the point; production code may not (below).
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // Request parts and settings carry their schemas' static types here (defineRoute, loadConfig): no `any` in
    // production code. Tests and test support may use it where a test needs a value of no particular type.
    files: ['services/**/*.ts', 'operator/**/*.ts', 'bin/**/*.ts'],
    ignores: ['**/*.test.ts', '**/*.test-d.ts', '**/testing/**', '**/*.contract.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'error' },
  },
  {
    // busboy emits 'error' on every part stream of a body cut short, read or not: one stream without a listener ends
    // the process. openMultipart attaches one to every part before a route sees it.
    files: ['**/*.ts'],
    ignores: ['services/lib/http/multipart.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'busboy', message: 'Open multipart bodies with openMultipart from services/lib/http.' }] },
      ],
    },
  },
  ...boundaries,
);
