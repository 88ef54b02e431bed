import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { boundaries } from './eslint.boundaries.js';

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', '.models/', 'charts/', 'coverage/', '.tools/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
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
